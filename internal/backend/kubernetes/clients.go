package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	authv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	authv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients is what the backend asks of a cluster: the core API (namespaces,
// nodes, pods, services), access reviews, the server's version, and a way
// to reach a port inside a pod. Only these typed clients are built in, not
// the whole clientset.
type Clients struct {
	Core    corev1client.CoreV1Interface
	Authz   authv1client.AuthorizationV1Interface // nil: access is not checked ahead
	Version discovery.ServerVersionInterface
	Forward Forwarder
	// NodeProxy GETs path from port of a node through the API server
	// (nodes/proxy); nil where there is none (tests).
	NodeProxy func(ctx context.Context, node string, port int, path string) ([]byte, error)
	Server    string // the API server's URL, for messages
	Context   string // the kubeconfig context
	Namespace string // the context's namespace ("" = default)
}

// RBACDoc is where the permissions a run needs are listed.
const RBACDoc = "docs/kubernetes.md (RBAC)"

// Connect loads the kubeconfig as kubectl does (--kubeconfig, else
// $KUBECONFIG, else ~/.kube/config; --context, else its current context)
// and makes the clients. It does not contact the cluster.
func Connect(ctx context.Context, o Options) (*Clients, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		if _, err := os.Stat(o.Kubeconfig); err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %v; give the cluster's kubeconfig file", o.Kubeconfig, unwrapPath(err))
		}
		rules.ExplicitPath = o.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		switch {
		case clientcmd.IsEmptyConfig(err):
			return nil, errors.New("no kubeconfig: give --kubeconfig FILE (or set KUBECONFIG); for the local cluster of `cnperf cluster up` it is /run/cnperf/kube/admin.kubeconfig")
		case o.Context != "" && strings.Contains(err.Error(), "context"):
			return nil, fmt.Errorf("--context %s: %s; use one of the kubeconfig's contexts (kubectl config get-contexts)", o.Context, oneLine(err.Error()))
		}
		return nil, fmt.Errorf("kubeconfig: %s; fix the file or give another with --kubeconfig", oneLine(err.Error()))
	}
	ctxName := o.Context
	if ctxName == "" {
		if raw, err := cc.RawConfig(); err == nil {
			ctxName = raw.CurrentContext
		}
	}
	cl, err := ClientsFor(cfg, ctxName)
	if err == nil {
		cl.Namespace, _, _ = cc.Namespace()
	}
	return cl, err
}

// ClientsFor makes the clients for a rest config.
func ClientsFor(cfg *rest.Config, ctxName string) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	// creating 10,000 services is 10,000 requests: the default 5 per
	// second would take half an hour
	cfg.QPS, cfg.Burst = 200, 400
	cfg.WarningHandler = rest.NoWarnings{}
	cfg.UserAgent = "cnperf"
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %s", oneLine(err.Error()))
	}
	authz, err := authv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %s", oneLine(err.Error()))
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %s", oneLine(err.Error()))
	}
	rc := core.RESTClient()
	return &Clients{
		Core: core, Authz: authz, Version: disc, Server: cfg.Host, Context: ctxName,
		Forward: &apiForwarder{cfg: cfg, rc: rc},
		NodeProxy: func(ctx context.Context, node string, port int, path string) ([]byte, error) {
			return rc.Get().AbsPath("/api/v1/nodes", fmt.Sprintf("%s:%d", node, port), "proxy", path).DoRaw(ctx)
		},
	}, nil
}

// Reachable asks the API server its version: the first request of a run.
func (c *Clients) Reachable(ctx context.Context) error {
	_, err := c.Version.ServerVersion()
	if err == nil {
		return nil
	}
	return c.explain(err, "reach")
}

// explain turns an API error into one line naming the fix.
func (c *Clients) explain(err error, doing string) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server at %s refused the kubeconfig's credentials (Unauthorized); renew them or use another --context", c.Server)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("forbidden to %s: %s; grant the kubeconfig's user the role in %s", doing, oneLine(apiMessage(err)), RBACDoc)
	}
	var ue *url.Error
	if errors.As(err, &ue) || isNetErr(err) {
		cause := err
		if ue != nil {
			cause = ue.Err
		}
		return fmt.Errorf("cannot reach the Kubernetes API server at %s (%s); check that the cluster is up and that --kubeconfig/--context name it", c.Server, oneLine(cause.Error()))
	}
	if doing == "reach" {
		return fmt.Errorf("the API server at %s: %s; check --kubeconfig/--context", c.Server, oneLine(err.Error()))
	}
	return fmt.Errorf("%s: %s", doing, oneLine(err.Error()))
}

func isNetErr(err error) bool {
	s := err.Error()
	for _, m := range []string{"connection refused", "no route to host", "i/o timeout", "no such host", "network is unreachable", "context deadline exceeded", "connection reset"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func apiMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return se.Status().Message
	}
	return err.Error()
}

// access is one thing a run does, checked ahead with a
// SelfSubjectAccessReview.
type access struct{ verb, resource, sub, ns string }

// needed is what a run does: the minimal RBAC (docs/kubernetes.md).
var needed = []access{
	{"create", "namespaces", "", ""}, {"delete", "namespaces", "", ""}, {"get", "namespaces", "", ""},
	{"list", "nodes", "", ""},
	{"create", "pods", "", ""}, {"get", "pods", "", ""}, {"list", "pods", "", ""}, {"patch", "pods", "", ""},
	{"create", "pods", "portforward", ""}, {"get", "pods", "log", ""},
	{"create", "services", "", ""},
}

// CheckAccess asks the API server whether the kubeconfig's user may do
// everything a run does, so that missing RBAC is an error before anything
// is created. Where access reviews are not allowed themselves, it passes:
// the first refused request says so instead.
func (c *Clients) CheckAccess(ctx context.Context, extra ...access) error {
	if c.Authz == nil {
		return nil
	}
	var denied []string
	for _, a := range append(slices.Clone(needed), extra...) {
		r, err := c.Authz.SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{
			Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
				Verb: a.verb, Resource: a.resource, Subresource: a.sub, Namespace: a.ns,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				return nil // cannot ask: find out by doing
			}
			return c.explain(err, "check access")
		}
		if !r.Status.Allowed {
			res := a.resource
			if a.sub != "" {
				res += "/" + a.sub
			}
			if a.ns != "" {
				res += " in " + a.ns
			}
			denied = append(denied, a.verb+" "+res)
		}
	}
	if len(denied) > 0 {
		return fmt.Errorf("the kubeconfig's user may not %s (RBAC); grant it the role in %s", strings.Join(denied, ", "), RBACDoc)
	}
	return nil
}

// oneLine keeps an error on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
