package apps

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/testutil"
)

// rolledOut is the status of a Deployment from deployment() that is rolled
// out and available, with conditions of its own.
func rolledOut() appsv1.DeploymentStatus {
	return appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2,
		AvailableReplicas: 2, Conditions: []appsv1.DeploymentCondition{available, progressed}}
}

// deployment is a two-replica Deployment at generation 2 with the given
// status, its progress deadline defaulted as the API server does.
func deployment(status appsv1.DeploymentStatus) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), ProgressDeadlineSeconds: ptr.To[int32](600)},
		Status:     status,
	}
}

func cond(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason}
}

var (
	available   = cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable")
	unavailable = cond(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable")
	progressed  = cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable")
	deadline    = cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded")
	quotaFail   = cond(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate")
)

var (
	invalid   = apierrors.NewInvalid(sunappsv1.GroupVersion.WithKind("Service").GroupKind(), "web", nil)
	forbidden = apierrors.NewForbidden(corev1.Resource("services"), "web", errors.New("a policy says no"))
)

// conflict is what Children records of a foreign object in a child's
// place.
func conflict(name string) *controllers.Children {
	return &controllers.Children{Kind: "Application", Conflicts: []string{name + " (it has no controller)"}}
}

// refusal is what Children records of a Service's write the API server
// refused with err.
func refusal(err error) *controllers.Children {
	return &controllers.Children{Kind: "Application", Refusal: &controllers.Refusal{Kind: "Service", Err: err}}
}

func TestComputeStatusConditions(t *testing.T) {
	healthy := rolledOut()
	tests := []struct {
		name            string
		obs             observation
		wantReady       metav1.ConditionStatus
		wantReason      string
		wantAvailable   metav1.ConditionStatus
		wantProgressing metav1.ConditionStatus
		wantDegraded    metav1.ConditionStatus
		wantKStatus     kstatus.Status
	}{
		{name: "no Deployment", obs: observation{},
			wantReady: "False", wantReason: sunappsv1.ReasonDeploymentMissing,
			wantAvailable: "False", wantProgressing: "False", wantDegraded: "False",
			wantKStatus: kstatus.InProgressStatus},
		{name: "conflict wins over everything", obs: observation{deployment: deployment(healthy), children: conflict("Service ns/web"),
			selectorImmutable: "x"},
			wantReady: "False", wantReason: sunappsv1.ReasonResourceConflict,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.FailedStatus},
		{name: "apply failure", obs: observation{deployment: deployment(healthy), children: refusal(invalid)},
			wantReady: "False", wantReason: sunappsv1.ReasonApplyFailed,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.FailedStatus},
		{name: "apply refused otherwise", obs: observation{deployment: deployment(healthy), children: refusal(forbidden)},
			wantReady: "False", wantReason: sunappsv1.ReasonApplyFailed,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.FailedStatus},
		{name: "a refusal before selector immutable", obs: observation{deployment: deployment(healthy), children: refusal(forbidden),
			selectorImmutable: "x"},
			wantReady: "False", wantReason: sunappsv1.ReasonApplyFailed,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.FailedStatus},
		{name: "selector immutable", obs: observation{deployment: deployment(healthy),
			selectorImmutable: "x"},
			wantReady: "False", wantReason: sunappsv1.ReasonSelectorImmutable,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.FailedStatus},
		{name: "Deployment controller has not seen the new generation",
			obs:       observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 1})},
			wantReady: "False", wantReason: sunappsv1.ReasonRollingOut,
			wantAvailable: "Unknown", wantProgressing: "Unknown", wantDegraded: "False",
			wantKStatus: kstatus.InProgressStatus},
		{name: "rolling out", obs: observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{available, progressed}})},
			wantReady: "False", wantReason: sunappsv1.ReasonRollingOut,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.InProgressStatus},
		{name: "the new Pods updated, the old one still serving", obs: observation{deployment: deployment(appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{available, cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "ReplicaSetUpdated")}})},
			wantReady: "False", wantReason: sunappsv1.ReasonRollingOut,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.InProgressStatus},
		{name: "unavailable", obs: observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2,
			UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{unavailable, progressed}})},
			wantReady: "False", wantReason: sunappsv1.ReasonDeploymentUnavailable,
			wantAvailable: "False", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.InProgressStatus},
		{name: "progress deadline exceeded", obs: observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{unavailable, deadline}})},
			wantReady: "False", wantReason: sunappsv1.ReasonDeploymentDegraded,
			wantAvailable: "False", wantProgressing: "False", wantDegraded: "True",
			wantKStatus: kstatus.FailedStatus},
		{name: "replica failure", obs: observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{available, progressed, quotaFail}})},
			wantReady: "False", wantReason: sunappsv1.ReasonDeploymentDegraded,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "True",
			wantKStatus: kstatus.FailedStatus},
		{name: "Service wanted but missing", obs: observation{deployment: deployment(healthy), serviceWanted: true},
			wantReady: "False", wantReason: sunappsv1.ReasonServiceMissing,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.InProgressStatus},
		{name: "ready", obs: observation{deployment: deployment(healthy), serviceWanted: true, service: &corev1.Service{}},
			wantReady: "True", wantReason: sunappsv1.ReasonReady,
			wantAvailable: "True", wantProgressing: "True", wantDegraded: "False",
			wantKStatus: kstatus.CurrentStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
			st := computeStatus(app, &tt.obs)
			g.Expect(st.ObservedGeneration).To(Equal(int64(7)))
			for _, c := range st.Conditions {
				g.Expect(c.ObservedGeneration).To(Equal(int64(7)))
				g.Expect(c.Reason).NotTo(BeEmpty())
			}
			ready := meta.FindStatusCondition(st.Conditions, sunappsv1.ConditionReady)
			g.Expect(ready.Status).To(Equal(tt.wantReady))
			g.Expect(ready.Reason).To(Equal(tt.wantReason))
			g.Expect(meta.FindStatusCondition(st.Conditions, sunappsv1.ConditionAvailable).Status).To(Equal(tt.wantAvailable))
			g.Expect(meta.FindStatusCondition(st.Conditions, sunappsv1.ConditionProgressing).Status).To(Equal(tt.wantProgressing))
			degraded := meta.FindStatusCondition(st.Conditions, sunappsv1.ConditionDegraded)
			if tt.wantDegraded == metav1.ConditionFalse {
				g.Expect(degraded).To(BeNil(), "Degraded exists only while true")
			} else {
				g.Expect(degraded.Status).To(Equal(tt.wantDegraded))
			}

			want := 4 // Available, Progressing, Ready, Reconciling or Stalled
			if tt.wantReady == metav1.ConditionTrue {
				want = 3
			}
			if degraded != nil {
				want++
			}
			g.Expect(st.Conditions).To(HaveLen(want))
			if tt.wantReady != metav1.ConditionTrue {
				g.Expect(readyReasonClasses).To(HaveKey(ready.Reason), "every reason of Ready=False is classified")
			}
			app.Status = st
			app.SetGroupVersionKind(sunappsv1.GroupVersion.WithKind("Application"))
			g.Expect(testutil.KStatus(g, app)).To(Equal(tt.wantKStatus))
		})
	}
}

// An Application converges from Stalled back to Current: the abnormal
// conditions go away rather than turn False.
func TestComputeStatusProgressConditionsFollowReady(t *testing.T) {
	g := NewWithT(t)
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	app.Status = computeStatus(app, &observation{children: conflict("Deployment ns/web")})
	stalled := meta.FindStatusCondition(app.Status.Conditions, sunappsv1.ConditionStalled)
	g.Expect(stalled).NotTo(BeNil())
	g.Expect(stalled.Reason).To(Equal(sunappsv1.ReasonResourceConflict))
	g.Expect(stalled.Message).To(ContainSubstring("Deployment ns/web"))

	app.Status = computeStatus(app, &observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 1})})
	g.Expect(meta.FindStatusCondition(app.Status.Conditions, sunappsv1.ConditionStalled)).To(BeNil())
	g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReconciling)).To(BeTrue())

	app.Status = computeStatus(app, &observation{deployment: deployment(appsv1.DeploymentStatus{
		ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{available, progressed}})})
	g.Expect(meta.FindStatusCondition(app.Status.Conditions, sunappsv1.ConditionReconciling)).To(BeNil())
	g.Expect(meta.FindStatusCondition(app.Status.Conditions, sunappsv1.ConditionStalled)).To(BeNil())
	g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)).To(BeTrue())
}

func TestComputeStatusKeepsTransitionTimeAndMirrorsChildren(t *testing.T) {
	g := NewWithT(t)
	then := metav1.NewTime(metav1.Now().Add(-3600e9).Truncate(1e9))
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	app.Status.Conditions = []metav1.Condition{{Type: sunappsv1.ConditionReady, Status: "False",
		Reason: sunappsv1.ReasonDeploymentMissing, LastTransitionTime: then}}
	st := computeStatus(app, &observation{
		selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
		service:  &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.7"}},
	})
	g.Expect(meta.FindStatusCondition(st.Conditions, sunappsv1.ConditionReady).LastTransitionTime).To(Equal(then))
	g.Expect(st.Selector).To(Equal("app=nginx"))
	g.Expect(st.ClusterIP).To(Equal("10.0.0.7"))
	g.Expect(st.Workflow).To(Equal(sunappsv1.WorkflowStatus{}))
}

// The old Pods of a rollout end after it is done: their count is no part of
// the status, so their end needs no status write after Ready (at most two
// per rollout: the new generation seen, then Ready).
func TestComputeStatusIgnoresTerminatingPods(t *testing.T) {
	g := NewWithT(t)
	rolledOut := func(terminating *int32) *observation {
		return &observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 2,
			Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, TerminatingReplicas: terminating,
			Conditions: []appsv1.DeploymentCondition{available, progressed}})}
	}
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	app.Status = computeStatus(app, rolledOut(ptr.To[int32](1)))
	g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)).To(BeTrue(),
		"Ready while the old Pod terminates")
	for name, terminating := range map[string]*int32{"0": ptr.To[int32](0), "unset": nil, "3": ptr.To[int32](3)} {
		g.Expect(equality.Semantic.DeepEqual(computeStatus(app, rolledOut(terminating)), app.Status)).To(BeTrue(),
			"terminatingReplicas %s changes nothing", name)
	}
	g.Expect(computeStatus(app, &observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 2,
		Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{available, progressed}})})).NotTo(Equal(app.Status),
		"another counter is mirrored")
}

// computeStatus returns a new status and leaves the Application as it was.
func TestComputeStatusLeavesTheApplication(t *testing.T) {
	g := NewWithT(t)
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	app.Status = computeStatus(app, &observation{deployment: deployment(appsv1.DeploymentStatus{ObservedGeneration: 1})})
	before := app.DeepCopy()
	st := computeStatus(app, &observation{children: conflict("Deployment ns/web")})
	g.Expect(meta.FindStatusCondition(st.Conditions, sunappsv1.ConditionReady).Reason).To(Equal(sunappsv1.ReasonResourceConflict))
	g.Expect(app).To(Equal(before))
}

// docs/conditions.md's Application table names every reason of Ready=False
// with the condition the code sets.
func TestConditionsDocAgrees(t *testing.T) {
	testutil.ExpectConditionsDoc(t, "Application", readyReasonClasses)
}

func TestChangedStatusParts(t *testing.T) {
	ready := metav1.Condition{Type: sunappsv1.ConditionReady, Status: metav1.ConditionTrue, Reason: sunappsv1.ReasonReady}
	base := sunappsv1.ApplicationStatus{ObservedGeneration: 1, ClusterIP: "10.0.0.1",
		Workflow: sunappsv1.WorkflowStatus{AvailableReplicas: 1}, Conditions: []metav1.Condition{ready}}
	tests := []struct {
		name   string
		change func(*sunappsv1.ApplicationStatus)
		want   []string
	}{
		{name: "nothing", change: func(*sunappsv1.ApplicationStatus) {}, want: nil},
		{name: "mirrored deployment", change: func(s *sunappsv1.ApplicationStatus) { s.Workflow.ReadyReplicas = 1 }, want: []string{"workflow"}},
		{name: "generation and cluster IP", change: func(s *sunappsv1.ApplicationStatus) {
			s.ObservedGeneration, s.ClusterIP = 2, ""
		}, want: []string{"observedGeneration", "clusterIP"}},
		{name: "a condition", change: func(s *sunappsv1.ApplicationStatus) { s.Conditions[0].Message = "now" }, want: []string{"conditions.Ready"}},
		{name: "a new condition", change: func(s *sunappsv1.ApplicationStatus) {
			s.Conditions = append(s.Conditions, metav1.Condition{Type: sunappsv1.ConditionDegraded})
		}, want: []string{"conditions.Degraded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := *base.DeepCopy()
			tt.change(&changed)
			NewWithT(t).Expect(changedStatusParts(&base, &changed)).To(Equal(tt.want))
		})
	}
}

// deploymentReady, which queues a Deployment's readiness first, must agree
// with readyCondition about when the Deployment makes its Application Ready,
// and both with kstatus about when the Deployment is rolled out.
func TestDeploymentReadyAgreesWithReadyConditionAndKStatus(t *testing.T) {
	healthy := rolledOut()
	with := func(change func(*appsv1.DeploymentStatus)) appsv1.DeploymentStatus {
		s := *healthy.DeepCopy()
		change(&s)
		return s
	}
	for _, c := range []struct {
		name   string
		status appsv1.DeploymentStatus
		want   bool
		// stricter: not ready although kstatus calls the Deployment
		// Current, which does not read ReplicaFailure.
		stricter bool
	}{
		{"rolled out and available", healthy, true, false},
		{"generation not observed", with(func(s *appsv1.DeploymentStatus) { s.ObservedGeneration = 1 }), false, false},
		{"a Pod not updated", with(func(s *appsv1.DeploymentStatus) { s.UpdatedReplicas = 1 }), false, false},
		{"a Pod not available", with(func(s *appsv1.DeploymentStatus) { s.AvailableReplicas = 1 }), false, false},
		{"a Pod not ready", with(func(s *appsv1.DeploymentStatus) { s.ReadyReplicas = 1 }), false, false},
		// In the middle of a rollout: the new Pods made, the old one still
		// counted available: the Application was Ready here before it went by
		// the Deployment's kstatus.
		{"an old Pod left", with(func(s *appsv1.DeploymentStatus) {
			s.Replicas = 3
			s.Conditions = []appsv1.DeploymentCondition{available,
				cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "ReplicaSetUpdated")}
		}), false, false},
		{"the new Pod updated but not available, the old one is", with(func(s *appsv1.DeploymentStatus) {
			s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas = 3, 1, 2, 2
		}), false, false},
		{"the rollout not reported complete", with(func(s *appsv1.DeploymentStatus) {
			s.Conditions = []appsv1.DeploymentCondition{available,
				cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "ReplicaSetUpdated")}
		}), false, false},
		{"Available False", with(func(s *appsv1.DeploymentStatus) {
			s.Conditions = []appsv1.DeploymentCondition{unavailable, progressed}
		}), false, false},
		{"no conditions yet", with(func(s *appsv1.DeploymentStatus) { s.Conditions = nil }), false, false},
		{"progress deadline exceeded", with(func(s *appsv1.DeploymentStatus) {
			s.Conditions = []appsv1.DeploymentCondition{available, deadline}
		}), false, false},
		{"a ReplicaSet failure", with(func(s *appsv1.DeploymentStatus) {
			s.Conditions = append(s.Conditions, quotaFail)
		}), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := deployment(c.status) // no kind, as from the cache
			ready := readyCondition(nil, &observation{deployment: d})
			if got := deploymentReady(d); got != c.want || got != (ready.Status == metav1.ConditionTrue) {
				t.Errorf("deploymentReady = %v, want %v; readyCondition says %s (%s)", got, c.want, ready.Status, ready.Reason)
			}
			typed := d.DeepCopy()
			typed.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
			if current := testutil.KStatus(NewWithT(t), typed) == kstatus.CurrentStatus; current != (c.want || c.stricter) {
				t.Errorf("kstatus says Current %v for the Deployment, want %v", current, c.want)
			}
		})
	}
}

// kstatus must say of the part of a Deployment that deploymentRollout
// converts (rolloutView) exactly what it says of the whole Deployment, as
// the cache holds it, in every state its rules tell apart.
func TestRolloutViewAgreesWithTheWholeDeployment(t *testing.T) {
	whole := func(change func(*appsv1.Deployment)) *appsv1.Deployment {
		d := deployment(rolledOut())
		d.Name, d.Namespace, d.UID, d.ResourceVersion = "web", "team-a", "1234", "77"
		d.Labels = map[string]string{"app": "web"}
		d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		d.Spec.Template.Labels = map[string]string{"app": "web"}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx:1.27",
			Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}
		d.Spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
		change(d)
		return d
	}
	for _, c := range []struct {
		name string
		d    *appsv1.Deployment
	}{
		{"rolled out", whole(func(*appsv1.Deployment) {})},
		{"generation not observed", whole(func(d *appsv1.Deployment) { d.Generation = 3 })},
		{"no generation", whole(func(d *appsv1.Deployment) { d.Generation = 0 })},
		{"being deleted", whole(func(d *appsv1.Deployment) { d.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} })},
		{"no progress deadline", whole(func(d *appsv1.Deployment) {
			d.Spec.ProgressDeadlineSeconds = nil
			d.Status.Conditions = []appsv1.DeploymentCondition{available}
		})},
		{"replicas defaulted", whole(func(d *appsv1.Deployment) { d.Spec.Replicas = nil })},
		{"scaled to zero", whole(func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To[int32](0)
			d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0, 0, 0
		})},
		{"an old Pod left", whole(func(d *appsv1.Deployment) { d.Status.Replicas = 3 })},
		{"a Pod not updated", whole(func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 })},
		{"a Pod not ready", whole(func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 })},
		{"a Pod not available", whole(func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 1 })},
		{"Available False", whole(func(d *appsv1.Deployment) {
			d.Status.Conditions = []appsv1.DeploymentCondition{unavailable, progressed}
		})},
		{"progress deadline exceeded", whole(func(d *appsv1.Deployment) {
			d.Status.Conditions = []appsv1.DeploymentCondition{available, deadline}
		})},
		{"a ReplicaSet failure", whole(func(d *appsv1.Deployment) {
			d.Status.Conditions = append(d.Status.Conditions, quotaFail)
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			typed := c.d.DeepCopy()
			typed.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
			g.Expect(deploymentRollout(c.d)).To(Equal(testutil.KStatusResult(g, typed)))
		})
	}
}

// BenchmarkDeploymentReady is what deciding a Deployment's readiness by
// kstatus costs (twice per Deployment update event, once per reconcile).
func BenchmarkDeploymentReady(b *testing.B) {
	d := deployment(rolledOut())
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx:1.27",
		Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}
	for b.Loop() {
		if !deploymentReady(d) {
			b.Fatal("not ready")
		}
	}
}
