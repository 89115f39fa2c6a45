package apps

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodFailureNamesTheFirstFailingContainer(t *testing.T) {
	crashLoop := corev1.ContainerStatus{Name: "app",
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}
	pullError := corev1.ContainerStatus{Name: "web",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "image is absent"}}}
	creating := corev1.ContainerStatus{Name: "app",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	running := corev1.ContainerStatus{Name: "app",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	exited := corev1.ContainerStatus{Name: "job",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}
	cleanExit := corev1.ContainerStatus{Name: "app",
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
	pod := func(name string, init []corev1.ContainerStatus, cs ...corev1.ContainerStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.PodStatus{InitContainerStatuses: init, ContainerStatuses: cs}}
	}
	deleting := pod("old", nil, crashLoop)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}

	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"no Pods", nil, ""},
		{"healthy", []corev1.Pod{pod("a", nil, running, cleanExit)}, ""},
		{"being created", []corev1.Pod{pod("a", nil, creating)}, ""},
		{"crash loop: reason and last exit", []corev1.Pod{pod("a", nil, crashLoop)},
			`Pod a container "app": CrashLoopBackOff, last terminated with exit code 1 (Error)`},
		{"waiting with the runtime's message", []corev1.Pod{pod("a", nil, pullError)},
			`Pod a container "web": ErrImageNeverPull: image is absent`},
		{"terminated now", []corev1.Pod{pod("a", nil, exited)},
			`Pod a container "job": last terminated with exit code 137 (OOMKilled)`},
		{"init containers first", []corev1.Pod{pod("a", []corev1.ContainerStatus{exited}, crashLoop)},
			`Pod a container "job": last terminated with exit code 137 (OOMKilled)`},
		{"the first failing Pod", []corev1.Pod{pod("a", nil, running), pod("b", nil, crashLoop)},
			`Pod b container "app": CrashLoopBackOff, last terminated with exit code 1 (Error)`},
		{"a Pod being deleted is skipped", []corev1.Pod{deleting, pod("b", nil, running)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podFailure(tc.pods); got != tc.want {
				t.Errorf("podFailure() = %q, want %q", got, tc.want)
			}
		})
	}
}
