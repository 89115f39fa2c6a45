package apps

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxPodsRead bounds the Pods one reconcile reads to explain a degraded
// Deployment: one failing container is enough to name the cause.
const maxPodsRead = 20

// observeFailingPod notes in s why the Deployment's Pods fail, once the
// Deployment is degraded (its progress deadline exceeded): the Deployment
// says only that its ReplicaSet timed out, the Pods say why (a crash loop
// and its exit code, an image that cannot be pulled). Pods are read from
// the API server, not the cache: the cache holds their metadata only
// (machinery.PodMetadataTransform), and this read happens only while an
// Application is degraded. A refusal (no right to list Pods) leaves the
// message without the Pod's part.
func (r *ApplicationReconciler) observeFailingPod(ctx context.Context, s *applicationScope) error {
	d := s.deployment
	if _, degraded := deploymentDegraded(d); !degraded || d.Spec.Selector == nil {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil //nolint:nilerr // the API server accepted this Deployment's selector; nothing to add
	}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(d.Namespace),
		client.MatchingLabelsSelector{Selector: selector}, client.Limit(maxPodsRead)); err != nil {
		if apierrors.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("listing the Pods of Deployment %s: %w", d.Name, err)
	}
	s.podFailure = podFailure(pods.Items)
	return nil
}

// podFailure describes the first failing container of pods for a person:
// the Pod, the container, why it waits and how it last ended, e.g.
// `Pod web-7d9-x2x container "app": CrashLoopBackOff, last terminated with
// exit code 1 (Error)`. Empty when no container is failing.
func podFailure(pods []corev1.Pod) string {
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for _, cs := range statuses {
				if msg := containerFailure(&cs); msg != "" {
					return fmt.Sprintf("Pod %s container %q: %s", p.Name, cs.Name, msg)
				}
			}
		}
	}
	return ""
}

// containerFailure is what is wrong with one container, or "": it waits
// for a reason other than being created, or it has ended in failure.
func containerFailure(cs *corev1.ContainerStatus) string {
	var msg string
	if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
		msg = w.Reason
		if w.Reason != "CrashLoopBackOff" && w.Message != "" {
			msg += ": " + w.Message
		}
	}
	last := cs.LastTerminationState.Terminated
	if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
		last = t
	}
	if last != nil && last.ExitCode != 0 {
		if msg != "" {
			msg += ", "
		}
		msg += fmt.Sprintf("last terminated with exit code %d", last.ExitCode)
		if last.Reason != "" {
			msg += " (" + last.Reason + ")"
		}
	}
	return msg
}
