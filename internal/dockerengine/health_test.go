package dockerengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/agent"
)

// TestAgentHealth: what became of an agent's container is named: removed,
// exited (killed), paused; a running one whose process lives is healthy.
func TestAgentHealth(t *testing.T) {
	states := map[string]map[string]any{
		"running": {"Status": "running", "Running": true, "Pid": os.Getpid()},
		"paused":  {"Status": "paused", "Running": true, "Paused": true, "Pid": os.Getpid()},
		"killed":  {"Status": "exited", "ExitCode": 137},
		"oom":     {"Status": "exited", "ExitCode": 137, "OOMKilled": true},
	}
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/containers/"), "/json")
		st, ok := states[id]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"message":"No such container: %s"}`, id)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"Id": id, "State": st})
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	e, err := New("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id    string
		want  error // nil: healthy
		words string
	}{
		{"running", nil, ""},
		{"paused", agent.ErrStopped, "docker unpause"},
		{"killed", agent.ErrExited, "exit code 137: killed (SIGKILL)"},
		{"oom", agent.ErrExited, "lack of memory"},
		{"removed", agent.ErrGone, "was removed"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			err := e.AgentHealth(tc.id, "cnperf-x-"+tc.id)(context.Background())
			if tc.want == nil {
				if err != nil {
					t.Fatalf("healthy container: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.words) || !strings.Contains(err.Error(), "cnperf-x-"+tc.id) {
				t.Fatalf("err %v, want %v naming the container and %q", err, tc.want, tc.words)
			}
		})
	}
}

// TestUnreachableHook: an engine cnperf started itself (docker-lab's) that
// dies is not answered with the user's fix for their own engine (issue 23,
// finding 8).
func TestUnreachableHook(t *testing.T) {
	e, err := New("unix://" + filepath.Join(t.TempDir(), "gone.sock"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.InspectContainer(context.Background(), "x")
	if err == nil || !strings.Contains(err.Error(), "systemctl start docker") {
		t.Fatalf("user's engine: %v, want the fix to start it", err)
	}
	e.Unreachable = func(err error) error { return fmt.Errorf("the engine cnperf started on lab host h1 has exited") }
	_, err = e.InspectContainer(context.Background(), "x")
	if err == nil || strings.Contains(err.Error(), "systemctl") || !strings.Contains(err.Error(), "cnperf started on lab host h1") {
		t.Fatalf("cnperf's own engine: %v, want the hook's cause and no systemctl", err)
	}
}
