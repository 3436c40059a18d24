package kubernetes

import (
	"context"
	"fmt"

	"github.com/cnperf/cnperf/internal/agent"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// agentHealth is the agent.Client Health of the agent in container name of
// p's pod: the pod deleted or no longer running, the agent's container
// ended or restarted (its job went with it), the API server not answering,
// the port-forward broken. A frozen process in a running pod is not
// visible through the API: nil then.
func (d *Deployment) agentHealth(p *pod, name string, t interface{ LastError() error }) func(context.Context) error {
	return func(ctx context.Context) error {
		kp, err := d.cl.Core.Pods(d.ns).Get(ctx, p.kp.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return agent.Cause(agent.ErrGone, fmt.Sprintf("its pod %s/%s was deleted", d.ns, p.kp.name))
		case err != nil:
			return fmt.Errorf("the API server does not answer about pod %s/%s (%v): the cluster's control plane is down or stalled", d.ns, p.kp.name, clip(err.Error()))
		case kp.DeletionTimestamp != nil:
			return agent.Cause(agent.ErrGone, fmt.Sprintf("its pod %s/%s is being deleted", d.ns, p.kp.name))
		}
		for _, cs := range kp.Status.ContainerStatuses {
			if cs.Name != name {
				continue
			}
			if term := cs.State.Terminated; term != nil {
				return agent.Cause(agent.ErrExited, fmt.Sprintf("its container %s in pod %s/%s has exited (%s, exit code %d)", name, d.ns, p.kp.name, term.Reason, term.ExitCode))
			}
			if cs.RestartCount > 0 {
				why := ""
				if last := cs.LastTerminationState.Terminated; last != nil {
					why = fmt.Sprintf(" after %s, exit code %d", last.Reason, last.ExitCode)
				}
				return agent.Cause(agent.ErrExited, fmt.Sprintf("its container %s in pod %s/%s restarted%s: the agent and its job are gone", name, d.ns, p.kp.name, why))
			}
		}
		if phase := kp.Status.Phase; phase != "Running" {
			return agent.Cause(agent.ErrExited, fmt.Sprintf("its pod %s/%s is %s, not Running", d.ns, p.kp.name, phase))
		}
		if terr := t.LastError(); terr != nil {
			return fmt.Errorf("the API server's port-forward to pod %s/%s broke (%s)", d.ns, p.kp.name, clip(terr.Error()))
		}
		return nil
	}
}
