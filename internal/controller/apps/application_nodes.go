package apps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/machinery"
)

// observeNodes notes in s a ready Pod of the Deployment whose node is not
// Ready. When a kubelet loses its container runtime it reports its node
// NotReady but leaves its Pods Ready (the node lifecycle controller marks
// them not ready only once the kubelet stops reporting), so the Deployment
// stays available on Pods nobody can vouch for; the Application does not
// claim Ready on them (NodeNotReady). The common case costs one lookup
// of the cached Nodes that are not Ready (an index, usually empty); the
// Pods are read from the API server (the cache holds their metadata only,
// without their node) only while some node is not Ready.
func (r *ApplicationReconciler) observeNodes(ctx context.Context, s *applicationScope) error {
	d := s.deployment
	if d == nil || d.Status.ReadyReplicas == 0 || d.Spec.Selector == nil {
		return nil
	}
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes, client.MatchingFields{machinery.NodeNotReadyField: "true"}); err != nil {
		return fmt.Errorf("listing the Nodes that are not Ready: %w", err)
	}
	notReady := notReadyNodes(nodes.Items)
	if len(notReady) == 0 {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil //nolint:nilerr // the API server accepted this Deployment's selector; nothing to add
	}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(d.Namespace),
		client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return fmt.Errorf("listing the Pods of Deployment %s: %w", d.Name, err)
	}
	s.unvouched = unvouchedPods(pods.Items, notReady)
	return nil
}

// notReadyNodes maps each node that does not report Ready=True to why.
func notReadyNodes(nodes []corev1.Node) map[string]string {
	out := map[string]string{}
	for i := range nodes {
		n := &nodes[i]
		if machinery.NodeIsReady(n) {
			continue
		}
		why := "reports no Ready condition"
		if c := machinery.NodeReadyCondition(n); c != nil {
			why = fmt.Sprintf("Ready=%s", c.Status)
			if c.Message != "" {
				why += ": " + c.Message
			}
		}
		out[n.Name] = why
	}
	return out
}

// unvouchedPods says, for a person, which ready Pods run on a node of
// notReady, or "" when none does.
func unvouchedPods(pods []corev1.Pod, notReady map[string]string) string {
	var unvouched []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if _, on := notReady[p.Spec.NodeName]; on && p.DeletionTimestamp == nil && machinery.PodIsReady(p) {
			unvouched = append(unvouched, p)
		}
	}
	if len(unvouched) == 0 {
		return ""
	}
	first := slices.MinFunc(unvouched, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	msg := fmt.Sprintf("Pod %s is ready, but its node %s is not (%s)", first.Name, first.Spec.NodeName,
		notReady[first.Spec.NodeName])
	if len(unvouched) > 1 {
		msg += fmt.Sprintf("; %d more Pods likewise", len(unvouched)-1)
	}
	return msg
}

// allApplications maps a Node event to every Application: which ones have
// Pods on the node only the API server knows (the cache holds Pods without
// their node), and a node changes readiness rarely.
func (r *ApplicationReconciler) allApplications(ctx context.Context, _ client.Object) []reconcile.Request {
	var apps sunappsv1.ApplicationList
	if err := r.List(ctx, &apps); err != nil {
		// Only a cache that is not started fails here; the Applications'
		// next events look at the node again.
		ctrl.LoggerFrom(ctx).Error(err, "Listing Applications for a Node's readiness change")
		return nil
	}
	out := make([]reconcile.Request, 0, len(apps.Items))
	for i := range apps.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps.Items[i])})
	}
	return out
}
