//! This process's own CPUs, for the built-in `local` target (issue 17 item 2): there aba
//! itself runs on the machine under test, and its poll loop wakes ten times a second during a
//! sample, so it moves off the CPUs the recipe pins workloads to, and gives every command it
//! starts the CPUs it found.
//!
//! Linux only (`sched_getaffinity`/`sched_setaffinity` as raw system calls, so that masks of
//! any size work: `cpu_set_t` holds 1024 CPUs).

use std::{fs, io};

use crate::target::cpu_set::{CpuSet, MAX_CPU};

/// Bits in one word of a kernel CPU mask.
const WORD_BITS: u32 = libc::c_ulong::BITS;

/// Words of a mask that holds every CPU up to [`MAX_CPU`].
const WORDS: usize = ((MAX_CPU + 1) / WORD_BITS) as usize + 1;

/// A CPU mask in the kernel's layout, built before a `fork` so that applying it in the child
/// (between `fork` and `exec`) allocates nothing.
#[derive(Clone, Debug)]
pub(crate) struct Mask(Vec<libc::c_ulong>);

impl Mask {
    /// The mask of `cpus`.
    pub(crate) fn of(cpus: &CpuSet) -> Mask {
        let mut words = vec![0; WORDS];
        for cpu in cpus.cpus() {
            words[(cpu / WORD_BITS) as usize] |= 1 << (cpu % WORD_BITS);
        }
        Mask(words)
    }

    /// Sets thread `tid`'s CPUs (0: the calling thread). Async-signal-safe: one system call.
    pub(crate) fn apply(&self, tid: libc::pid_t) -> io::Result<()> {
        // SAFETY: the pointer and length describe this mask's own initialised words.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_sched_setaffinity,
                tid,
                std::mem::size_of_val(self.0.as_slice()),
                self.0.as_ptr(),
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// The CPUs the calling thread may run on.
pub(crate) fn own() -> io::Result<CpuSet> {
    let mut words: Vec<libc::c_ulong> = vec![0; WORDS];
    // SAFETY: the kernel writes at most the given length into the buffer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getaffinity,
            0,
            std::mem::size_of_val(words.as_slice()),
            words.as_mut_ptr(),
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(words
        .iter()
        .enumerate()
        .flat_map(|(i, word)| {
            (0..WORD_BITS)
                .filter(move |bit| word & (1 << bit) != 0)
                .map(move |bit| i as u32 * WORD_BITS + bit)
        })
        .collect())
}

/// Moves every thread of this process to `cpus` (threads started later inherit it).
pub(crate) fn move_process(cpus: &CpuSet) -> io::Result<()> {
    let mask = Mask::of(cpus);
    for entry in fs::read_dir("/proc/self/task")? {
        let Ok(tid) = entry?.file_name().to_string_lossy().parse::<libc::pid_t>() else {
            continue;
        };
        match mask.apply(tid) {
            // A thread that ended since the listing.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            other => other?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Mask, own};
    use crate::target::cpu_set::CpuSet;

    #[test]
    fn masks_hold_any_cpu_and_the_own_affinity_reads_back() {
        let mask = Mask::of(&CpuSet::parse("0,63-64,8191").expect("list"));
        assert_eq!(mask.0[0], 1 | (1 << 63));
        assert_eq!(mask.0[1], 1);
        assert_eq!(mask.0[127], 1 << 63);
        // A thread of its own, so that the test runner's other threads are not moved.
        std::thread::spawn(|| {
            let all = own().expect("sched_getaffinity");
            assert!(!all.is_empty());
            let first =
                CpuSet::parse(&all.cpus().next().expect("a CPU").to_string()).expect("one CPU");
            Mask::of(&first).apply(0).expect("sched_setaffinity");
            assert_eq!(own().expect("again"), first);
        })
        .join()
        .expect("the thread");
    }
}
