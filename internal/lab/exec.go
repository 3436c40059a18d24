package lab

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
)

// Executor runs one command to completion. The real one execs it; tests use
// Recorder to compare the exact commands a network mode would issue.
type Executor interface {
	Run(ctx context.Context, argv []string) ([]byte, error)
}

// OSExec runs commands on this machine.
type OSExec struct{}

// Run executes argv and returns its standard output; on failure the error
// carries the command and what it printed on standard error.
func (OSExec) Run(ctx context.Context, argv []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.Bytes(), fmt.Errorf("%s: %s", strings.Join(argv, " "), msg)
	}
	return stdout.Bytes(), nil
}

// Recorder records commands instead of running them. Outputs maps a command
// line to the output it should return.
type Recorder struct {
	mu      sync.Mutex
	Lines   []string
	Outputs map[string]string
}

// Run records argv.
func (r *Recorder) Run(_ context.Context, argv []string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := strings.Join(argv, " ")
	r.Lines = append(r.Lines, line)
	return []byte(r.Outputs[line]), nil
}

// Text is the recorded commands, one per line, for golden comparison.
func (r *Recorder) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.Lines, "\n") + "\n"
}
