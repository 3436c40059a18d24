// Command pause is the sandbox ("pause") container of cnperf's local
// cluster: it holds a pod's namespaces open, reaps children it inherits as
// pid 1, and exits on SIGINT or SIGTERM. Built static and imported into each
// node's containerd by `cnperf cluster up`, so nothing is pulled.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
