package machinery

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// NodeReadyTransform returns the cache transform that keeps of a Node only
// what the Application controller reads: its name, resourceVersion and
// Ready condition (status, reason, message). Nodes carry large status
// (images, addresses, capacity) that nothing here needs. Anything else is
// returned unchanged; the transform is idempotent.
func NodeReadyTransform() toolscache.TransformFunc {
	return func(obj any) (any, error) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return obj, nil
		}
		out := &corev1.Node{
			TypeMeta: n.TypeMeta,
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion,
				DeletionTimestamp: n.DeletionTimestamp},
		}
		if c := NodeReadyCondition(n); c != nil {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason,
				Message: c.Message}}
		}
		return out, nil
	}
}

// NodeReadyCondition is the node's Ready condition, or nil.
func NodeReadyCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// NodeIsReady tells whether the node reports Ready=True.
func NodeIsReady(n *corev1.Node) bool {
	c := NodeReadyCondition(n)
	return c != nil && c.Status == corev1.ConditionTrue
}

// NodeNotReadyField is the cache index of Nodes that are not Ready (value
// "true"): a controller lists those alone, usually none, rather than every
// Node of a large cluster.
const NodeNotReadyField = "sunstrider.cn/node-not-ready"

// IndexNodeNotReady is NodeNotReadyField's indexer.
func IndexNodeNotReady(o client.Object) []string {
	if n, ok := o.(*corev1.Node); ok && !NodeIsReady(n) {
		return []string{"true"}
	}
	return nil
}

// NodeReadyChanged lets through the Node events that change whether a node
// is Ready: a node that stops or starts being Ready, or goes away while not
// Ready. Heartbeats and every other status change are dropped.
func NodeReadyChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool {
			n, ok := e.Object.(*corev1.Node)
			return ok && !NodeIsReady(n)
		},
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*corev1.Node)
			after, ok2 := e.ObjectNew.(*corev1.Node)
			return ok1 && ok2 && NodeIsReady(before) != NodeIsReady(after)
		},
		DeleteFunc: func(e event.DeleteEvent) bool {
			n, ok := e.Object.(*corev1.Node)
			return !ok || !NodeIsReady(n)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
