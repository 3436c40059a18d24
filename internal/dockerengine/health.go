package dockerengine

import (
	"context"
	"errors"
	"fmt"

	"github.com/cnperf/cnperf/internal/agent"
)

// AgentHealth is an agent.Client Health for the agent that is container
// id (named name in messages) on e: the container removed, exited,
// paused, or — on an engine of this machine's kernel — its process
// stopped; an engine that does not answer is the cause itself.
func (e *Engine) AgentHealth(id, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		cj, err := e.InspectContainer(ctx, id)
		switch {
		case IsNotFound(err):
			return agent.Cause(agent.ErrGone, fmt.Sprintf("its container %s was removed (docker rm?)", name))
		case err != nil:
			return err
		case cj.State.Paused:
			return agent.Cause(agent.ErrStopped, fmt.Sprintf("its container %s is paused; `docker unpause %s` resumes it", name, name))
		case !cj.State.Running:
			why := fmt.Sprintf("exit code %d", cj.State.ExitCode)
			if cj.State.OOMKilled {
				why += ", killed for lack of memory"
			} else if cj.State.ExitCode == 137 {
				why += ": killed (SIGKILL)"
			}
			if cj.State.Error != "" {
				why += ", " + cj.State.Error
			}
			return agent.Cause(agent.ErrExited, fmt.Sprintf("its container %s has exited (%s)", name, why))
		}
		if e.Local {
			// the engine records an exit after its shim reaped the
			// process: in between, the process tells
			if h := agent.ProcessHealth(cj.State.Pid); h != nil {
				if err := h(ctx); err != nil {
					return agent.Cause(kindOf(err), fmt.Sprintf("its container %s: %v", name, err))
				}
			}
		}
		return nil
	}
}

// kindOf is the agent.Err* kind a Health cause carries.
func kindOf(err error) error {
	for _, k := range []error{agent.ErrStopped, agent.ErrExited, agent.ErrGone} {
		if errors.Is(err, k) {
			return k
		}
	}
	return err
}
