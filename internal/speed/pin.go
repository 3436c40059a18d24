package speed

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// pinned is a thread of this process locked to the calling goroutine and,
// where this process may (root: CAP_SYS_NICE), at real-time priority
// above everything else of the run: SCHED_FIFO 1, or one above the
// thread's own where the run already runs real-time (`chrt -f 5 cnperf
// run`), so that work it does on a CPU starts at once and no other task
// of this machine (the run's own agents included) cuts it or keeps it
// waiting: what a probe times is the CPU, not the queue for it. release
// gives the thread back its mask and policy; where it cannot, the thread
// stays locked and ends with its goroutine.
type pinned struct {
	oldMask unix.CPUSet
	oldAttr *unix.SchedAttr
	rt      bool
}

func pin() *pinned {
	runtime.LockOSThread()
	p := &pinned{}
	if unix.SchedGetaffinity(0, &p.oldMask) != nil {
		runtime.UnlockOSThread()
		return nil
	}
	if a, err := unix.SchedGetAttr(0, 0); err == nil {
		prio := uint32(0)
		switch a.Policy {
		case unix.SCHED_NORMAL:
			prio = 1
		case unix.SCHED_FIFO, unix.SCHED_RR:
			if a.Priority < 99 {
				prio = a.Priority + 1
			}
		}
		if prio > 0 {
			p.oldAttr = a
			p.rt = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: prio}, 0) == nil
		}
	}
	return p
}

// to moves the thread to cpu (-1: back to its own mask).
func (p *pinned) to(cpu int) bool {
	if cpu < 0 {
		return unix.SchedSetaffinity(0, &p.oldMask) == nil
	}
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set) == nil
}

func (p *pinned) release() {
	clean := unix.SchedSetaffinity(0, &p.oldMask) == nil
	if p.rt {
		clean = unix.SchedSetAttr(0, p.oldAttr, 0) == nil && clean
	}
	if clean {
		runtime.UnlockOSThread()
	}
}
