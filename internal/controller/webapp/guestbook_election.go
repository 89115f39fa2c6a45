/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package webapp

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/machinery"
)

// instance is what the election needs to know of one Pod of a Guestbook.
type instance struct {
	Name    string
	Ordinal int
	// Ready is true when the Pod is Ready and not terminating.
	Ready bool
	// Role is the value of the Pod's LabelRole ("" when unset).
	Role string
}

// instancesOf returns the instances of gb among pods, by ordinal: the Pods
// controlled by gb's StatefulSet, the live one whose UID is stsUID, and
// named after it. The UID is what tells them from a Pod anyone who may
// create Pods in the namespace can make with the same name, labels and an
// owner reference naming the StatefulSet: such a Pod is never elected, and
// never relabelled. An empty stsUID (no StatefulSet observed) has no
// instances.
func instancesOf(gb *webappv1.Guestbook, stsUID types.UID, pods []corev1.Pod) []instance {
	out := make([]instance, 0, len(pods))
	if stsUID == "" {
		return out
	}
	for i := range pods {
		pod := &pods[i]
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref == nil || ref.UID != stsUID || ref.Kind != "StatefulSet" || ref.Name != gb.Name ||
			!strings.HasPrefix(ref.APIVersion, "apps/") {
			continue
		}
		ordinal, err := strconv.Atoi(strings.TrimPrefix(pod.Name, gb.Name+"-"))
		if err != nil || !strings.HasPrefix(pod.Name, gb.Name+"-") {
			continue
		}
		out = append(out, instance{
			Name:    pod.Name,
			Ordinal: ordinal,
			Ready:   pod.DeletionTimestamp == nil && machinery.PodIsReady(pod),
			Role:    pod.Labels[LabelRole],
		})
	}
	slices.SortFunc(out, func(a, b instance) int { return cmp.Compare(a.Ordinal, b.Ordinal) })
	return out
}

// labelledActive returns the instance currently labelled active that the
// election may keep: the first Ready one by ordinal, or "".
func labelledActive(instances []instance) string {
	for _, in := range instances {
		if in.Role == RoleActive && in.Ready {
			return in.Name
		}
	}
	return ""
}

// electActive chooses the active instance: currentActive while it is Ready,
// otherwise the Ready standby of lowest ordinal, otherwise the Ready instance
// of lowest ordinal, or none ("") when no
// instance is Ready. standby lists the other instances by ordinal (nil when
// there are none).
func electActive(instances []instance, currentActive string) (active string, standby []string) {
	sorted := slices.Clone(instances)
	slices.SortFunc(sorted, func(a, b instance) int { return cmp.Compare(a.Ordinal, b.Ordinal) })
	for _, in := range sorted {
		if in.Name == currentActive && in.Ready {
			active = in.Name
		}
	}
	// Failover promotes the next Ready standby; a fresh instance (no role
	// yet, e.g. the replacement of a deleted active) only when none is left.
	for _, eligible := range []func(instance) bool{
		func(in instance) bool { return in.Ready && in.Role == RoleStandby },
		func(in instance) bool { return in.Ready },
	} {
		if active != "" {
			break
		}
		for _, in := range sorted {
			if eligible(in) {
				active = in.Name
				break
			}
		}
	}
	for _, in := range sorted {
		if in.Name != active {
			standby = append(standby, in.Name)
		}
	}
	return active, standby
}

// rolesInSync reports whether every instance already carries the role the
// election gives it.
func rolesInSync(instances []instance, active string) bool {
	for _, in := range instances {
		if in.Role != roleOf(in.Name, active) {
			return false
		}
	}
	return true
}

func roleOf(name, active string) string {
	if name == active {
		return RoleActive
	}
	return RoleStandby
}

// roles is the outcome of the election.
type roles struct {
	instances []instance
	active    string
	standby   []string
}

// labelRoles elects the active instance of s's Guestbook among the Pods of
// its StatefulSet as observed (instancesOf) and labels the Pods
// accordingly, through s.children (Patch), which records the API server's
// answers as for any write. pods are read from the API server, not the
// cache, so that the relabelling never acts on a stale view (which could
// leave two instances active); a Pod changed since is refused by the
// optimistic lock, a stale read. Every other instance is demoted before
// the new active one is promoted, and nothing is promoted once a demotion
// was not made: two instances are never active at once.
func (r *GuestbookReconciler) labelRoles(ctx context.Context, s *guestbookScope, pods []corev1.Pod) (roles, error) {
	gb := s.gb
	var stsUID types.UID
	if sts := s.observation.statefulSet; sts != nil {
		stsUID = sts.UID
	}
	ins := instancesOf(gb, stsUID, pods)
	previous := labelledActive(ins)
	active, standby := electActive(ins, previous)
	if rolesInSync(ins, active) {
		return roles{instances: ins, active: active, standby: standby}, nil
	}
	byName := make(map[string]*corev1.Pod, len(pods))
	for i := range pods {
		byName[pods[i].Name] = &pods[i]
	}
	// As labelled, when the relabelling stops short.
	asLabelled := func() roles {
		var standby []string
		for _, in := range ins {
			if in.Role == RoleStandby {
				standby = append(standby, in.Name)
			}
		}
		return roles{instances: ins, active: previous, standby: standby}
	}

	// Demote first, then promote: two instances are never active at once.
	for _, in := range ins {
		if in.Name != active && in.Role != RoleStandby {
			if ok, err := setRole(ctx, s.children, byName[in.Name], RoleStandby); err != nil || !ok {
				return asLabelled(), err
			}
		}
	}
	for _, in := range ins {
		if in.Name == active && in.Role != RoleActive {
			if ok, err := setRole(ctx, s.children, byName[in.Name], RoleActive); err != nil || !ok {
				return asLabelled(), err
			}
			ctrl.LoggerFrom(ctx).Info("Promoted instance to active", "pod", in.Name, "previous", previous)
			r.Recorder.Eventf(gb, byName[in.Name], corev1.EventTypeNormal, "Promoted", "Promote",
				"Promoted pod %s/%s to active", namespaceOf(gb), in.Name)
		}
	}
	for i := range ins {
		ins[i].Role = roleOf(ins[i].Name, active)
	}
	return roles{instances: ins, active: active, standby: standby}, nil
}

// setRole sets the role label of pod through children with a merge patch
// guarded by its resourceVersion, and reports whether it was set: a Pod
// changed since it was read is a stale read, one gone needs no label (its
// deletion brings a new reconcile), a refusal is reported in the status.
// The patch must change nothing else: the shipped admission policy
// (config/rbac/manager_pod_policy.yaml) refuses the operator any other
// change of a Pod.
func setRole(ctx context.Context, children *controllers.Children, pod *corev1.Pod, role string) (bool, error) {
	orig := pod.DeepCopy()
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[LabelRole] = role
	return children.Patch(ctx, pod, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}
