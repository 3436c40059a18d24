package dockerengine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cmdConn is a connection to an engine through a command's standard input
// and output: `ssh ... docker system dial-stdio` for an ssh:// host, as
// the docker CLI's commandconn. Each HTTP connection is one command.
type cmdConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *tailBuffer

	closeOnce sync.Once
	done      chan struct{} // closed when the command has exited
	waitErr   error
}

// dialCommand starts name args as a connection. The command is in a
// process group of its own, so that a Ctrl-C at the terminal reaches
// cnperf (whose teardown still needs the engine) and not ssh. When cnperf
// dies, even by kill -9, the command's input closes and dial-stdio, then
// ssh, end with it. (No Pdeathsig: it fires when the OS thread that
// started the command exits, and cnperf's namespace code ends threads.)
func dialCommand(ctx context.Context, name string, args ...string) (net.Conn, error) {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c := &cmdConn{cmd: cmd, stderr: &tailBuffer{}, done: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// pipes of our own, not StdinPipe/StdoutPipe: Wait closes those when
	// the command exits, under a Read still taking what it wrote
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c.stdin, c.stdout = inW, outR
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Read reads the engine's answer. At the end of the command's output, or
// when it no longer takes input, the error says why it ended: ssh's own
// message (a refused key, an unknown host, no docker on the far side).
func (c *cmdConn) Read(p []byte) (int, error) {
	n, err := c.stdout.Read(p)
	if err == io.EOF {
		return n, c.why(err)
	}
	return n, err
}

func (c *cmdConn) Write(p []byte) (int, error) {
	n, err := c.stdin.Write(p)
	if err != nil {
		return n, c.why(err)
	}
	return n, nil
}

// why is err, or what the command said on its way out.
func (c *cmdConn) why(err error) error {
	select {
	case <-c.done:
	case <-time.After(time.Second):
	}
	if msg := c.stderr.String(); msg != "" {
		return fmt.Errorf("%s: %s", c.cmd.Args[0], msg)
	}
	return err
}

// Close ends the command: its input closed first (dial-stdio ends on
// that), then SIGTERM and, after 3 s, SIGKILL.
func (c *cmdConn) Close() error {
	c.closeOnce.Do(func() {
		_ = c.stdin.Close()
		defer c.stdout.Close()
		select {
		case <-c.done:
			return
		case <-time.After(100 * time.Millisecond):
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(3 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	return nil
}

type cmdAddr struct{}

func (cmdAddr) Network() string { return "cmd" }
func (cmdAddr) String() string  { return "dial-stdio" }

func (c *cmdConn) LocalAddr() net.Addr              { return cmdAddr{} }
func (c *cmdConn) RemoteAddr() net.Addr             { return cmdAddr{} }
func (c *cmdConn) SetDeadline(time.Time) error      { return nil }
func (c *cmdConn) SetReadDeadline(time.Time) error  { return nil }
func (c *cmdConn) SetWriteDeadline(time.Time) error { return nil }

// tailBuffer keeps the last 2 KiB written to it, on one line.
type tailBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if t.b.Len() > 2048 {
		rest := t.b.Bytes()[t.b.Len()-2048:]
		t.b.Reset()
		t.b.Write(rest)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(strings.Fields(t.b.String()), " ")
}
