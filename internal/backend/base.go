package backend

import "fmt"

// PodHolder is a backend's own pod type: a pointer to a struct that embeds
// Pod, whose AsPod it answers.
type PodHolder interface {
	comparable
	AsPod() *Pod
}

// AsPod is p itself; a backend's pod type that embeds Pod answers it too
// (PodHolder).
func (p *Pod) AsPod() *Pod { return p }

// Base is the part of a Deployment that every backend of named pods
// answers alike: its ID, its network, the backend's name (Named), a pod by
// name, and the pair of pods a Dial goes between. A backend's Deployment
// embeds it and keeps its pods in Pods.
type Base[P PodHolder] struct {
	BackendName  string // recorded in every result (Named), and in errors
	DeploymentID string
	NetworkName  string
	Pods         map[string]P
}

// NewBase is a Base with no pods yet.
func NewBase[P PodHolder](backend, id, network string) Base[P] {
	return Base[P]{BackendName: backend, DeploymentID: id, NetworkName: network, Pods: map[string]P{}}
}

// ID implements Deployment.
func (b *Base[P]) ID() string { return b.DeploymentID }

// Network implements Deployment.
func (b *Base[P]) Network() string { return b.NetworkName }

// Backend implements Named.
func (b *Base[P]) Backend() string { return b.BackendName }

// Pod implements Deployment: nil for a name the deployment has no pod of.
func (b *Base[P]) Pod(name string) *Pod {
	var none P
	if p := b.Pods[name]; p != none {
		return p.AsPod()
	}
	return nil
}

// Pair is the pods a Dial from pod from to pod to goes between, or an
// error naming the deployment when it has no pod of either name.
func (b *Base[P]) Pair(from, to string) (f, t P, err error) {
	var none P
	f, t = b.Pods[from], b.Pods[to]
	if f == none || t == none {
		return f, t, fmt.Errorf("no pod %q or %q in %s deployment %s", from, to, b.BackendName, b.DeploymentID)
	}
	return f, t, nil
}
