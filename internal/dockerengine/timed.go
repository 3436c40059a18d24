package dockerengine

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// TimedRun creates container name from cfg and starts it, as `docker run
// -d` does, and says when each call returned: the start-up experiment's
// docker_create and docker_start phases. id is set as soon as the
// container exists, also with an error, for the caller to remove
// (RemoveWithin).
func (e *Engine) TimedRun(ctx context.Context, name string, cfg ContainerConfig) (id string, created, started time.Time, err error) {
	id, err = e.CreateContainer(ctx, name, cfg)
	created = time.Now()
	if err != nil {
		return id, created, created, err
	}
	err = e.StartContainer(ctx, id)
	return id, created, time.Now(), err
}

// RemoveWithin removes container id ("" for none) on a context of its
// own, bounded by limit: a deferred clean-up that must run also when the
// caller's context has ended. An error is dropped: what is left carries
// its deployment's labels, by which teardown and `cnperf clean` remove.
func (e *Engine) RemoveWithin(id string, limit time.Duration) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	_ = e.RemoveContainer(ctx, id)
}

// NetNSPath is the network namespace of running container id, as a path
// this machine can enter (/proc/PID/ns/net): for a local engine only.
func (e *Engine) NetNSPath(ctx context.Context, id string) (string, error) {
	cj, err := e.InspectContainer(ctx, id)
	if err != nil {
		return "", err
	}
	return "/proc/" + strconv.Itoa(cj.State.Pid) + "/ns/net", nil
}

// LogTail is the end of container id's log (its last three lines) for an
// error message, "" when there is none or the engine does not answer
// within 5 s.
func (e *Engine) LogTail(id string) string {
	if id == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, _ := e.Logs(ctx, id, 3)
	return strings.TrimSpace(s)
}
