package kubernetes

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/ground"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// TestAgentHealth: an agent that does not answer is explained by its pod:
// deleted, its container ended or restarted, the API server not answering
// (issue 23, finding 8: these showed as "agent hung up mid-run" or
// "context deadline exceeded").
func TestAgentHealth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(f *fakeCluster, ns, pod string)
		want  error // nil: healthy
		words string
	}{
		{"running", func(*fakeCluster, string, string) {}, nil, ""},
		{"deleted", func(f *fakeCluster, ns, pod string) {
			if err := f.cs.CoreV1().Pods(ns).Delete(context.Background(), pod, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, agent.ErrGone, "was deleted"},
		{"killed", func(f *fakeCluster, ns, pod string) {
			setContainer(t, f, ns, pod, func(cs *corev1.ContainerStatus) {
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137}}
			})
		}, agent.ErrExited, "exit code 137"},
		{"restarted", func(f *fakeCluster, ns, pod string) {
			setContainer(t, f, ns, pod, func(cs *corev1.ContainerStatus) {
				cs.RestartCount = 1
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}
			})
		}, agent.ErrExited, "restarted after OOMKilled"},
		{"api stalled", func(f *fakeCluster, _, _ string) {
			f.cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, context.DeadlineExceeded
			})
		}, nil, "API server does not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, f := newFake(t, nodes(2)...)
			topo, _ := pairs.Topology("pod", []ground.Placement{ground.SameHost}, -1, -1)
			d, err := b.Deploy(context.Background(), topo)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Teardown() })
			dep := d.(*Deployment)
			p := dep.Pods["s1"]
			tc.fault(f, dep.ns, p.kp.name)
			err = p.Agent.Health(context.Background())
			switch {
			case tc.words == "" && err != nil:
				t.Fatalf("healthy pod: %v", err)
			case tc.words != "" && (err == nil || !strings.Contains(err.Error(), tc.words)):
				t.Fatalf("err %v, want %q", err, tc.words)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

func setContainer(t *testing.T, f *fakeCluster, ns, name string, change func(*corev1.ContainerStatus)) {
	t.Helper()
	pods := f.cs.CoreV1().Pods(ns)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Status.ContainerStatuses {
		change(&p.Status.ContainerStatuses[i])
	}
	if _, err := pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
