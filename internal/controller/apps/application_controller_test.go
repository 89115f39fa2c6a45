package apps

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/testutil"
)

const (
	timeout  = 20 * time.Second
	interval = 50 * time.Millisecond
)

func init() {
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)
	SetDefaultConsistentlyPollingInterval(interval)
}

// loadSample reads config/samples/apps_v1_application.yaml.
func loadSample(t *testing.T) *sunappsv1.Application {
	t.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "samples", "apps_v1_application.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	app := &sunappsv1.Application{}
	if err := yaml.Unmarshal(data, app); err != nil {
		t.Fatal(err)
	}
	return app
}

// seedSample is the seed's nginx-sample exactly as written (no template labels).
func seedSample(ns string) *sunappsv1.Application {
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-sample", Namespace: ns, Labels: map[string]string{"app": "nginx"}},
		Spec: sunappsv1.ApplicationSpec{
			Deployment: sunappsv1.DeploymentTemplate{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "nginx", Image: "nginx:1.14.2", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
				}}}},
			},
			Service: sunappsv1.ServiceTemplate{ServiceSpec: corev1.ServiceSpec{
				Type:  corev1.ServiceTypeNodePort,
				Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}, // nodePort assigned by the server
			}},
		},
	}
}

// minimalApp has no labels, no selector and no Service.
func minimalApp(ns, name string) *sunappsv1.Application {
	return &sunappsv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sunappsv1.ApplicationSpec{Deployment: sunappsv1.DeploymentTemplate{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}},
		}},
	}
}

func getDeployment(g Gomega, app *sunappsv1.Application) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(app), d)).To(Succeed())
	return d
}

func getService(g Gomega, app *sunappsv1.Application) *corev1.Service {
	s := &corev1.Service{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(app), s)).To(Succeed())
	return s
}

func getApp(g Gomega, app *sunappsv1.Application) *sunappsv1.Application {
	out := &sunappsv1.Application{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(app), out)).To(Succeed())
	return out
}

func readyCond(g Gomega, app *sunappsv1.Application) *metav1.Condition {
	c := meta.FindStatusCondition(getApp(g, app).Status.Conditions, sunappsv1.ConditionReady)
	g.Expect(c).NotTo(BeNil())
	return c
}

// markDeploymentAvailable writes, through the status subresource, the status
// a Deployment controller would report once every replica is available.
// envtest runs no controller-manager.
func markDeploymentAvailable(g Gomega, app *sunappsv1.Application) {
	d := getDeployment(g, app)
	replicas := ptr.Deref(d.Spec.Replicas, 1)
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability.", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
				Message: "ReplicaSet has successfully progressed.", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()},
		},
	}
	g.Expect(k8sClient.Status().Update(context.Background(), d)).To(Succeed())
}

// expectInvariants checks what every reconciled Application's status holds.
func expectInvariants(g Gomega, app *sunappsv1.Application) {
	got := getApp(g, app)
	g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
	for _, t := range []string{sunappsv1.ConditionReady, sunappsv1.ConditionAvailable, sunappsv1.ConditionProgressing} {
		c := meta.FindStatusCondition(got.Status.Conditions, t)
		g.Expect(c).NotTo(BeNil(), "condition %s", t)
		g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(c.Reason).NotTo(BeEmpty())
	}
}

func TestSampleAppliesWithTemplateLabels(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := loadSample(t)
	app.Namespace = ns
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())

	// The template labels the seed's CRD rejected are stored, not pruned.
	g.Expect(getApp(g, app).Spec.Deployment.Template.Labels).To(Equal(map[string]string{"app": "nginx"}))

	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		g.Expect(metav1.IsControlledBy(d, getApp(g, app))).To(BeTrue())
		g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("app", "nginx"))
		g.Expect(d.Spec.Selector.MatchLabels).To(Equal(map[string]string{"app": "nginx"}))
		g.Expect(d.Labels).To(HaveKeyWithValue("app", "nginx"))
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.14.2"))
		s := getService(g, app)
		g.Expect(metav1.IsControlledBy(s, getApp(g, app))).To(BeTrue())
		g.Expect(s.Spec.Ports[0].NodePort).To(Equal(int32(30080)))
		g.Expect(s.Spec.Selector).To(Equal(map[string]string{"app": "nginx"}))
	}).Should(Succeed())

	g.Eventually(func(g Gomega) {
		c := readyCond(g, app)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonRollingOut))
	}).Should(Succeed())

	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		g.Expect(got.Status.Workflow.AvailableReplicas).To(Equal(int32(1)))
		g.Expect(got.Status.Selector).To(Equal("app=nginx"))
		g.Expect(got.Status.ClusterIP).To(Equal(getService(g, app).Spec.ClusterIP))
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, sunappsv1.ConditionAvailable)).To(BeTrue())
		g.Expect(meta.FindStatusCondition(got.Status.Conditions, sunappsv1.ConditionDegraded)).To(BeNil(),
			"Degraded exists only while true")
		expectInvariants(g, app)
	}).Should(Succeed())
}

func TestSeedSampleWithoutTemplateLabels(t *testing.T) {
	g := NewWithT(t)
	ns := testutil.Namespace(t, k8sClient)
	app := seedSample(ns)
	// NodePorts are cluster-wide: the sample test holds 30080.
	app.Spec.Service.Ports[0].NodePort = 30081
	g.Expect(k8sClient.Create(context.Background(), app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		g.Expect(d.Spec.Template.Labels).To(Equal(map[string]string{"app": "nginx"}))
		g.Expect(getService(g, app).Spec.Ports[0].NodePort).To(Equal(int32(30081)))
	}).Should(Succeed())
}

func TestNoLabelsNoSelectorNoPorts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "plain")
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())

	want := map[string]string{ApplicationLabel: "plain"}
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		g.Expect(d.Spec.Selector.MatchLabels).To(Equal(want))
		g.Expect(d.Spec.Template.Labels).To(Equal(want))
		g.Expect(getApp(g, app).Status.Selector).To(Equal(ApplicationLabel + "=plain"))
	}).Should(Succeed())
	// No ports, no Service.
	g.Consistently(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), &corev1.Service{}))
	}, "1s").Should(BeTrue())

	// Ports added: a Service selecting the derived labels.
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Service.Ports = []corev1.ServicePort{{Name: "http", Port: 8080}}
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		s := getService(g, app)
		g.Expect(s.Spec.Selector).To(Equal(want))
		g.Expect(s.Spec.Ports[0].TargetPort).To(Equal(intstr.FromInt32(8080)))
		g.Expect(s.Spec.ClusterIP).NotTo(BeEmpty())
	}).Should(Succeed())

	// Ports removed: the Service the operator made goes away.
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Service.Ports = nil
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), &corev1.Service{}))
	}).Should(BeTrue())
}

func TestSpecChangesReachChildrenAndServerFieldsAreKept(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := seedSample(ns)
	app.Spec.Service.Ports = append(app.Spec.Service.Ports, corev1.ServicePort{Name: "metrics", Port: 9090})
	app.Spec.Service.Ports[0].Name = "http"
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())

	var clusterIP string
	var metricsNodePort int32
	g.Eventually(func(g Gomega) {
		s := getService(g, app)
		g.Expect(s.Spec.Ports).To(HaveLen(2))
		clusterIP, metricsNodePort = s.Spec.ClusterIP, s.Spec.Ports[1].NodePort
		g.Expect(metricsNodePort).NotTo(BeZero())
	}).Should(Succeed())

	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Deployment.Replicas = ptr.To[int32](3)
		got.Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:1.27"
		got.Spec.Deployment.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "prod"}}
		got.Spec.Service.Ports[0].TargetPort = intstr.FromInt32(8080)
		got.Labels["tier"] = "web"
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())

	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		g.Expect(*d.Spec.Replicas).To(Equal(int32(3)))
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"))
		g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(ConsistOf(corev1.EnvVar{Name: "MODE", Value: "prod"}))
		g.Expect(d.Labels).To(HaveKeyWithValue("tier", "web"))
		s := getService(g, app)
		g.Expect(s.Spec.Ports[0].TargetPort).To(Equal(intstr.FromInt32(8080)))
		g.Expect(s.Spec.ClusterIP).To(Equal(clusterIP))
		g.Expect(s.Spec.Ports[1].NodePort).To(Equal(metricsNodePort))
	}).Should(Succeed())

	// A field removed from the spec is removed from the child.
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Deployment.Template.Spec.Containers[0].Env = nil
		delete(got.Labels, "tier")
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(BeEmpty())
		g.Expect(d.Labels).NotTo(HaveKey("tier"))
	}).Should(Succeed())
}

// createSeedSample creates the seed's sample in a namespace of its own and
// waits for its Deployment and Service.
func createSeedSample(t *testing.T, g Gomega) *sunappsv1.Application {
	app := seedSample(testutil.Namespace(t, k8sClient))
	g.Expect(k8sClient.Create(context.Background(), app)).To(Succeed())
	g.Eventually(func(g Gomega) { getDeployment(g, app); getService(g, app) }).Should(Succeed())
	return app
}

func TestDriftIsRepairedAndDeletedChildrenRecreated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	app := createSeedSample(t, g)

	// Hand edits of fields the operator owns are put back.
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		d.Spec.Replicas = ptr.To[int32](5)
		d.Spec.Template.Spec.Containers[0].Image = "evil:latest"
		g.Expect(k8sClient.Update(ctx, d, client.FieldOwner("kubectl-edit"))).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		g.Expect(*d.Spec.Replicas).To(Equal(int32(1)))
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.14.2"))
	}).Should(Succeed())
	// The repair is told by an Updated event; the creation was not (the
	// broadcaster writes events in order, so a Created one would be there).
	g.Eventually(func(g Gomega) []string {
		return eventReasons(g, app)
	}).Should(ContainElement(controllers.ReasonUpdated))
	g.Expect(eventReasons(g, app)).To(HaveEach(controllers.ReasonUpdated))

	g.Eventually(func(g Gomega) {
		s := getService(g, app)
		s.Spec.Ports[0].TargetPort = intstr.FromInt32(9999)
		g.Expect(k8sClient.Update(ctx, s, client.FieldOwner("kubectl-edit"))).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getService(g, app).Spec.Ports[0].TargetPort).To(Equal(intstr.FromInt32(80)))
	}).Should(Succeed())

	// A port changed by a merge patch (another field manager) is put back,
	// not left beside the restored one.
	svc := getService(g, app)
	patch := []byte(`{"spec":{"ports":[{"name":"http","port":8080,"targetPort":80}]}}`)
	g.Expect(k8sClient.Patch(ctx, svc, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-patch"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		ports := getService(g, app).Spec.Ports
		g.Expect(ports).To(HaveLen(1))
		g.Expect(ports[0].Port).To(Equal(int32(80)))
		g.Expect(readyCond(g, app).Reason).NotTo(Equal(sunappsv1.ReasonApplyFailed))
	}).Should(Succeed())

	// A child stripped of its owner reference (but still carrying the
	// operator's marks) gets it back.
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		d.OwnerReferences = nil
		g.Expect(k8sClient.Update(ctx, d, client.FieldOwner("kubectl-edit"))).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(metav1.IsControlledBy(getDeployment(g, app), getApp(g, app))).To(BeTrue())
	}).Should(Succeed())

	// Deleted children come back.
	oldDep, oldSvc := getDeployment(g, app).UID, getService(g, app).UID
	g.Expect(k8sClient.Delete(ctx, getDeployment(g, app))).To(Succeed())
	g.Expect(k8sClient.Delete(ctx, getService(g, app))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getDeployment(g, app).UID).NotTo(Equal(oldDep))
		g.Expect(getService(g, app).UID).NotTo(Equal(oldSvc))
	}).Should(Succeed())
}

// TestStaleStatusWriteIsRefused writes a status computed from a stale copy
// of an Application, as a reconcile reading a lagging cache would: the API
// server refuses it, so no mix of the two writes is stored, and the
// Application is reconciled again after controllers.StaleRetry. The newer
// status here is a hand edit, which the controller then puts right.
func TestStaleStatusWriteIsRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	app := createSeedSample(t, g)
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())

	stale := getApp(g, app)
	newer := stale.DeepCopy()
	newer.Status.ClusterIP = "10.96.0.42"
	newer.Status.Workflow.ReadyReplicas = 7
	g.Expect(k8sClient.Status().Patch(ctx, newer, client.MergeFrom(stale))).To(Succeed())

	w := controllers.StatusWriter{Client: k8sClient, Recorder: events.NewFakeRecorder(10), Batch: StatusBatch}
	obs := observation{
		deployment: getDeployment(g, app), service: getService(g, app), serviceWanted: true,
		selector: getDeployment(g, app).Spec.Selector,
		// What the stale reconcile saw: a refusal (a change of a
		// condition, written at once rather than put off).
		children: &controllers.Children{Kind: "Application", Refusal: &controllers.Refusal{Kind: "Deployment",
			Err: apierrors.NewForbidden(appsv1.Resource("deployments"), app.Name, errors.New("seen by the stale reconcile"))}},
	}
	// ... and other counters.
	obs.deployment.Status.ReadyReplicas = 3
	written := stale.DeepCopy()
	written.Status = computeStatus(stale, &obs)
	_, wait, err := w.Write(ctx, stale, written)
	g.Expect(err).NotTo(HaveOccurred(), "a stale copy is dropped quietly, no error")
	// There was a change of Ready to write, and it was not put off: the
	// patch was sent.
	g.Expect(meta.FindStatusCondition(written.Status.Conditions, sunappsv1.ConditionReady).Reason).
		To(Equal(sunappsv1.ReasonApplyFailed))
	// The write was made (not put off for StatusBatch) and found stale:
	// the Application is reconciled again soon, at its own priority.
	g.Expect(wait).To(Equal(controllers.StaleRetry), "the write was made and found stale")
	g.Expect(getApp(g, app).Status.Workflow.ReadyReplicas).NotTo(Equal(int32(3)), "the stale write was refused")
	g.Expect(readyCond(g, app).Reason).NotTo(Equal(sunappsv1.ReasonApplyFailed), "the stale write was refused")

	// The controller puts the tampered status right: the status is its own.
	g.Eventually(func(g Gomega) {
		got := getApp(g, app).Status
		g.Expect(got.ClusterIP).To(Equal(getService(g, app).Spec.ClusterIP))
		g.Expect(got.Workflow.ReadyReplicas).To(Equal(getDeployment(g, app).Status.ReadyReplicas))
	}).Should(Succeed())
}

// eventReasons lists the reasons of the events recorded about app.
func eventReasons(g Gomega, app *sunappsv1.Application) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8sClient.List(context.Background(), list, client.InNamespace(app.Namespace))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "Application" && e.Regarding.Name == app.Name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// foreignDeployment is a Deployment someone else made in ns, named as the
// seed sample's (nginx-sample): no owner reference, no label.
func foreignDeployment(ns string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-sample", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"x": "y"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

// expectDeploymentConflict waits until app is Ready=False ResourceConflict,
// naming the Deployment in its place.
func expectDeploymentConflict(g Gomega, app *sunappsv1.Application) {
	g.Eventually(func(g Gomega) {
		c := readyCond(g, app)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonResourceConflict))
		g.Expect(c.Message).To(ContainSubstring("Deployment " + app.Namespace + "/" + app.Name))
	}).Should(Succeed())
}

func TestForeignChildrenAreNeverAdoptedOrOverwritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	foreign := foreignDeployment(ns)
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
	rv := foreign.ResourceVersion

	app := seedSample(ns)
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	expectDeploymentConflict(g, app)
	g.Eventually(func(g Gomega) {
		evs := &eventsv1.EventList{}
		g.Expect(k8sClient.List(ctx, evs, client.InNamespace(ns))).To(Succeed())
		g.Expect(evs.Items).To(ContainElement(And(
			HaveField("Reason", sunappsv1.ReasonResourceConflict),
			HaveField("Type", corev1.EventTypeWarning),
			HaveField("Regarding.Name", "nginx-sample"))))
	}).Should(Succeed())

	// The foreign Deployment is untouched, also by a reconcile after the
	// conflict was reported (an ignored change of the Application).
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, app)).To(Succeed())
	suite.ExpectReconciled(g, mark, applicationController, client.ObjectKeyFromObject(app))
	g.Consistently(func(g Gomega) {
		d := getDeployment(g, app)
		g.Expect(d.ResourceVersion).To(Equal(rv))
		g.Expect(d.OwnerReferences).To(BeEmpty())
		// A conflict stops the later phases: no Service is made for a
		// Deployment someone else runs.
		g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), &corev1.Service{}))).
			To(BeTrue(), "no Service for a foreign Deployment")
	}, "1s").Should(Succeed())

	// Once it is gone, the Application recovers.
	g.Expect(k8sClient.Delete(ctx, foreign)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(metav1.IsControlledBy(getDeployment(g, app), getApp(g, app))).To(BeTrue())
	}).Should(Succeed())
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
}

func TestForeignServiceIsNeverOverwritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-sample", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1234}}},
	}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
	app := seedSample(ns)
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := readyCond(g, app)
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonResourceConflict))
		g.Expect(c.Message).To(ContainSubstring("Service " + ns + "/nginx-sample"))
	}).Should(Succeed())

	// The foreign Service is untouched, also by a reconcile after the
	// conflict was reported (an ignored change of the Application).
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, app)).To(Succeed())
	suite.ExpectReconciled(g, mark, applicationController, client.ObjectKeyFromObject(app))
	g.Consistently(func(g Gomega) {
		s := getService(g, app)
		g.Expect(s.ResourceVersion).To(Equal(foreign.ResourceVersion))
		g.Expect(s.OwnerReferences).To(BeEmpty())
		g.Expect(s.Spec.Ports[0].Port).To(Equal(int32(1234)))
	}, "1s").Should(Succeed())
}

func TestDegradedFollowsTheDeployment(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "stuck")
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) { getDeployment(g, app) }).Should(Succeed())

	d := getDeployment(g, app)
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "stuck-1" has timed out progressing.`},
		},
	}
	g.Expect(k8sClient.Status().Update(ctx, d)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, sunappsv1.ConditionDegraded)).To(BeTrue())
		g.Expect(meta.FindStatusCondition(got.Status.Conditions, sunappsv1.ConditionProgressing).Reason).To(Equal("ProgressDeadlineExceeded"))
		c := readyCond(g, app)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonDeploymentDegraded))
		g.Expect(got.Status.Workflow.UnavailableReplicas).To(Equal(int32(1)))
		expectInvariants(g, app)
	}).Should(Succeed())
}

// A spec change is Ready only once rolled out: in the middle of the
// rollout the old Pod still counts as available and the new one as
// updated, and the Application must not say Ready (nor kstatus Current)
// before the Deployment is Current itself.
func TestSpecChangeIsReadyOnlyOnceRolledOut(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "rolling")
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) { markDeploymentAvailable(g, app) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())

	got := getApp(g, app)
	got.Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:1.15.0"
	g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	var d *appsv1.Deployment
	g.Eventually(func(g Gomega) {
		d = getDeployment(g, app)
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.15.0"))
	}).Should(Succeed())
	// The Deployment controller's status with the new Pod made, not yet
	// ready, and the old one still serving.
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		UnavailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability."},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated",
				Message: `ReplicaSet "rolling-2" is progressing.`},
		},
	}
	g.Expect(k8sClient.Status().Update(ctx, d)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		g.Expect(got.Status.Workflow.Replicas).To(Equal(int32(2)), "the mid-rollout status was read")
		c := readyCond(g, app)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonRollingOut))
		g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
		got.SetGroupVersionKind(sunappsv1.GroupVersion.WithKind("Application"))
		g.Expect(testutil.KStatus(g, got)).To(Equal(kstatus.InProgressStatus))
	}).Should(Succeed())

	g.Eventually(func(g Gomega) { markDeploymentAvailable(g, app) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
		got.SetGroupVersionKind(sunappsv1.GroupVersion.WithKind("Application"))
		g.Expect(testutil.KStatus(g, got)).To(Equal(kstatus.CurrentStatus))
	}).Should(Succeed())
}

func TestScaleSubresource(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "scaled")
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) { markDeploymentAvailable(g, app) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())

	scale := &autoscalingv1.Scale{}
	g.Expect(k8sClient.SubResource("scale").Get(ctx, app, scale)).To(Succeed())
	g.Expect(scale.Status.Replicas).To(Equal(int32(1)))
	g.Expect(scale.Status.Selector).To(Equal(ApplicationLabel + "=scaled"))
	scale.Spec.Replicas = 3
	g.Expect(k8sClient.SubResource("scale").Update(ctx, app, client.WithSubResourceBody(scale))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(*getDeployment(g, app).Spec.Replicas).To(Equal(int32(3)))
	}).Should(Succeed())
}

func TestSelectorNeverChanges(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "fixed")
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(func(g Gomega) { getDeployment(g, app) }).Should(Succeed())

	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Deployment.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"other": "x"}}
		got.Spec.Deployment.Template.Labels = map[string]string{"other": "x"}
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := readyCond(g, app)
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonSelectorImmutable))
		g.Expect(c.Message).To(ContainSubstring("spec.deployment.selector"))
	}).Should(Succeed())
	g.Expect(getDeployment(g, app).Spec.Selector.MatchLabels).To(Equal(map[string]string{ApplicationLabel: "fixed"}))
}

func TestInvalidNamesAreRejected(t *testing.T) {
	ns := testutil.Namespace(t, k8sClient)
	for _, name := range []string{"1nginx", "nginx.sample", strings.Repeat("a", 64)} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := k8sClient.Create(context.Background(), minimalApp(ns, name))
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("metadata.name"))
			g.Expect(apierrors.IsNotFound(k8sClient.Get(context.Background(),
				client.ObjectKey{Namespace: ns, Name: name}, &sunappsv1.Application{}))).To(BeTrue())
		})
	}
}

func TestChildrenCarryOperatorLabels(t *testing.T) {
	g := NewWithT(t)
	ns := testutil.Namespace(t, k8sClient)
	app := minimalApp(ns, "labelled")
	g.Expect(k8sClient.Create(context.Background(), app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		d := getDeployment(g, app)
		g.Expect(d.Labels).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue))
		g.Expect(d.Labels).To(HaveKeyWithValue(ApplicationLabel, "labelled"))
		g.Expect(d.Annotations).To(HaveKey(apply.HashAnnotation))
	}).Should(Succeed())
}

// applicationController is the controller's name in logs and metrics.
const applicationController = ControllerName

// noWritesAtSteadyState converges several Applications, then expects
// the manager to reconcile each again (after a change it ignores) without an
// API write for any of them, and a restarted manager to reconcile each
// without a write either. Only this test's namespace is counted: what
// other tests left behind does not matter. It runs inside
// TestApplicationConformance/Restart (testutil.ConformanceKind
// SteadyState), whose one manager restart it shares.
func noWritesAtSteadyState(t *testing.T) testutil.SteadyState {
	g := NewWithT(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	sample := loadSample(t)
	sample.Namespace, sample.Name = ns, "sample-quiet"
	sample.Spec.Service.Ports[0].NodePort = 0
	apps := []*sunappsv1.Application{seedSample(ns), minimalApp(ns, "quiet"), sample}
	for _, app := range apps {
		g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	}
	for _, app := range apps {
		g.Eventually(func(g Gomega) { markDeploymentAvailable(g, app) }).Should(Succeed())
	}
	for _, app := range apps {
		g.Eventually(func(g Gomega) {
			g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	}
	keys := testutil.Keys(apps...)

	mine := writes.In(testutil.InNamespace(ns))
	g.Expect(mine.Total()).NotTo(BeZero(), "the counter sees the manager's writes in %s", ns)
	g.Eventually(mine.Drain).WithPolling(time.Second).Should(BeZero(), "the manager settles")
	mark := suite.Reconciles.Mark()
	for _, app := range apps {
		g.Expect(testutil.Nudge(ctx, k8sClient, app)).To(Succeed())
	}
	suite.ExpectQuiet(g, mine, mark, applicationController, keys...)

	before, err := testutil.ReconcileTotal(applicationController)
	g.Expect(err).NotTo(HaveOccurred())
	// The restarted manager reconciles every Application anew; none of this
	// test's needs a write (the Restart case checks it).
	return testutil.SteadyState{
		Scopes: []testutil.Scope{testutil.InNamespace(ns)},
		Keys:   keys,
		Then: func(t *testing.T) {
			g := NewWithT(t)
			after, err := testutil.ReconcileTotal(applicationController)
			g.Expect(err).NotTo(HaveOccurred())
			all := &sunappsv1.ApplicationList{}
			g.Expect(k8sClient.List(ctx, all)).To(Succeed())
			t.Logf("restarted manager: %d reconciles of this test's %d Applications, %d of any (%d Applications in the cluster; controller_runtime_reconcile_total +%.0f)",
				countReconciles(keys), len(keys), suite.Reconciles.Total(applicationController), len(all.Items), after-before)
			for _, app := range apps {
				g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
			}
		},
	}
}

// countReconciles sums the running manager's reconciles of keys.
func countReconciles(keys []client.ObjectKey) int {
	n := 0
	for _, key := range keys {
		n += suite.Reconciles.Count(applicationController, key)
	}
	return n
}
