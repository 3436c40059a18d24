package kubernetes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pullSecretNamespace is where --image-pull-secret is read from: the
// namespace it names, else the kubeconfig context's, else default.
func (b *Backend) pullSecretNamespace(cl *Clients) string {
	ns, _ := b.Opts.pullSecret()
	if ns == "" {
		ns = cl.Namespace
	}
	if ns == "" {
		ns = "default"
	}
	return ns
}

// pullSecretAccess is what --image-pull-secret needs besides a run's RBAC.
func (b *Backend) pullSecretAccess(cl *Clients) []access {
	if b.Opts.PullSecret == "" {
		return nil
	}
	return []access{{verb: "get", resource: "secrets", ns: b.pullSecretNamespace(cl)}, {verb: "create", resource: "secrets"}}
}

// copyPullSecret copies --image-pull-secret into the deployment's
// namespace (a pod can only name a Secret of its own namespace); it goes
// with the namespace.
func (d *Deployment) copyPullSecret(ctx context.Context) error {
	if d.b.Opts.PullSecret == "" {
		return nil
	}
	src := d.b.pullSecretNamespace(d.cl)
	_, name := d.b.Opts.pullSecret()
	s, err := d.cl.Core.Secrets(src).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("--image-pull-secret: namespace %s has no Secret %s; create it (kubectl -n %s create secret docker-registry %s --docker-server=REGISTRY --docker-username=USER --docker-password=PASSWORD) or name it as NAMESPACE/NAME",
			src, name, src, name)
	}
	if err != nil {
		return d.cl.explain(err, "read --image-pull-secret "+src+"/"+name)
	}
	if s.Type != corev1.SecretTypeDockerConfigJson && s.Type != corev1.SecretTypeDockercfg {
		return fmt.Errorf("--image-pull-secret %s/%s is of type %s; the nodes pull only with kubernetes.io/dockerconfigjson (kubectl create secret docker-registry)", src, name, s.Type)
	}
	cp := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.ns, Labels: d.labels()},
		Type:       s.Type,
		Data:       s.Data,
	}
	if _, err := d.cl.Core.Secrets(d.ns).Create(ctx, cp, metav1.CreateOptions{}); err != nil {
		return d.cl.explain(err, "copy --image-pull-secret into "+d.ns)
	}
	return nil
}
