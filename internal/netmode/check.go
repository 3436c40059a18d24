package netmode

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// KernelConfig is the running kernel's build configuration, if it can be read.
type KernelConfig struct {
	opts  map[string]string
	known bool
}

var (
	kcOnce sync.Once
	kc     KernelConfig
)

// RunningKernel reads /proc/config.gz or /boot/config-$(uname -r) once.
func RunningKernel() KernelConfig {
	kcOnce.Do(func() { kc = loadKernelConfig() })
	return kc
}

func loadKernelConfig() KernelConfig {
	var r io.Reader
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if gz, err := gzip.NewReader(f); err == nil {
			r = gz
		}
	}
	if r == nil {
		var u unix.Utsname
		_ = unix.Uname(&u)
		if f, err := os.Open("/boot/config-" + unix.ByteSliceToString(u.Release[:])); err == nil {
			defer f.Close()
			r = f
		}
	}
	if r == nil {
		return KernelConfig{}
	}
	return ParseKernelConfig(r)
}

// ParseKernelConfig parses a kernel .config.
func ParseKernelConfig(r io.Reader) KernelConfig {
	c := KernelConfig{opts: map[string]string{}, known: true}
	s := bufio.NewScanner(r)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), "=")
		if ok && strings.HasPrefix(k, "CONFIG_") {
			c.opts[k] = v
		}
	}
	return c
}

// Has reports whether an option is built in or a module; unknown configs
// (no config file) are assumed present and left to fail loudly at setup.
func (c KernelConfig) Has(opt string) bool {
	if !c.known {
		return true
	}
	v := c.opts[opt]
	return v == "y" || v == "m"
}

// Check reports the first missing requirement of m on this machine, with the fix.
func Check(m Mode) error { return CheckOpts(m, nil) }

// CheckOpts is Check for m built with the given mode options.
func CheckOpts(m Mode, opts map[string]string) error {
	return CheckOptsWith(m, opts, RunningKernel(), exec.LookPath)
}

// CheckWith is Check against a given kernel config and PATH lookup.
func CheckWith(m Mode, k KernelConfig, lookPath func(string) (string, error)) error {
	return CheckOptsWith(m, nil, k, lookPath)
}

// CheckOptsWith is CheckOpts against a given kernel config and PATH lookup.
func CheckOptsWith(m Mode, opts map[string]string, k KernelConfig, lookPath func(string) (string, error)) error {
	req := m.Requires()
	if opts["controlplane"] != "off" {
		req.Commands = append(req.Commands[:len(req.Commands):len(req.Commands)], req.ControlPlane...)
	}
	for _, f := range req.Kernel {
		if !k.Has(f.Config) {
			return fmt.Errorf("%s needs %s (%s); this kernel lacks it", m.Name(), f.Config, f.What)
		}
	}
	for _, c := range req.Commands {
		if _, err := lookPath(c); err != nil {
			return fmt.Errorf("%s needs the %q command; install it (apt-get install %s)", m.Name(), c, debianPackage(c))
		}
	}
	return nil
}

func debianPackage(cmd string) string {
	switch cmd {
	case "ip", "bridge":
		return "iproute2"
	case "iptables", "iptables-save", "iptables-restore":
		return "iptables"
	case "nft":
		return "nftables"
	case "bird", "birdc":
		return "bird2"
	case "etcd":
		return "etcd-server"
	case "etcdctl":
		return "etcd-client"
	case "sysctl":
		return "procps"
	case "nginx":
		return "nginx-light"
	}
	return cmd
}
