//go:build node

package node

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

func intstrPort() intstr.IntOrString { return intstr.FromInt32(appPort) }

// make dev's demo Application (hack/dev-demo/hello.yaml) runs on the real
// node and answers through its Service, from the host: by its ClusterIP
// (kube-proxy's iptables rules) and by its NodePort on the node's address.
func TestDevDemoAnswersThroughClusterIPAndNodePort(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, "default")
	var app sunappsv1.Application
	g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: "hello"}, &app)).To(Succeed())
	g.Expect(condition(&app, sunappsv1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
	g.Expect(testutil.KStatus(g, &app)).To(Equal(kstatus.CurrentStatus))
	pods := appPods(g, "default", "hello")
	g.Expect(pods).To(HaveLen(1))
	g.Expect(pods[0].Spec.NodeName).To(Equal(realNode))
	g.Expect(pods[0].Status.ContainerStatuses).To(HaveLen(1))
	g.Expect(pods[0].Status.ContainerStatuses[0].ContainerID).To(HavePrefix("containerd://"))

	for _, url := range []string{
		fmt.Sprintf("http://%s:80/", app.Status.ClusterIP),
		fmt.Sprintf("http://%s:30090/", nodeIP),
	} {
		g.Eventually(func() (string, error) { return get(url) }, 10*time.Second, 200*time.Millisecond).
			Should(Equal("v1"), "GET %s", url)
		t.Logf("GET %s: v1", url)
	}
	// The seeds' sample stays on kwok's nodes: nginx cannot be pulled here.
	var nginx sunappsv1.Application
	g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: "nginx-sample"}, &nginx)).To(Succeed())
	selector, err := labels.Parse(nginx.Status.Selector)
	g.Expect(err).NotTo(HaveOccurred())
	var sample corev1.PodList
	g.Expect(admin.List(ctx(), &sample, client.InNamespace("default"),
		client.MatchingLabelsSelector{Selector: selector})).To(Succeed())
	g.Expect(sample.Items).NotTo(BeEmpty())
	for _, p := range sample.Items {
		g.Expect(p.Spec.NodeName).To(HavePrefix("kwok-node-"))
	}
}

// An Application is Ready only once its container passes its readiness
// probe: the container runs (started) while the probe fails, and the
// Application says DeploymentUnavailable; turned ready, it becomes Ready.
func TestApplicationIsReadyOnlyOnceItsContainerIsReady(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	app := application(ns, "probe", 1, appContainer("-not-ready"))
	g.Expect(admin.Create(ctx(), app)).To(Succeed())

	// The container has started and the operator has seen the Deployment
	// with its one unready Pod: the window in which it must not say Ready.
	var pod corev1.Pod
	g.Eventually(func(g Gomega) {
		pods := appPods(g, ns, "probe")
		g.Expect(pods).To(HaveLen(1))
		pod = pods[0]
		g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
		g.Expect(pod.Status.ContainerStatuses[0].Started).To(HaveValue(BeTrue()))
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.Status.Workflow.Replicas).To(Equal(int32(1)))
		g.Expect(app.Status.Workflow.UpdatedReplicas).To(Equal(int32(1)))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		ready := condition(app, sunappsv1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(sunappsv1.ReasonDeploymentUnavailable))
		g.Expect(testutil.KStatus(g, app)).To(Equal(kstatus.InProgressStatus))
	}, 5*time.Second, 250*time.Millisecond).Should(Succeed())

	// The app's own endpoint turns its readiness on: the kubelet's probe
	// passes, and only then is the Application Ready.
	g.Expect(post(fmt.Sprintf("http://%s:%d/ready/on", pod.Status.PodIP, appPort))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(condition(app, sunappsv1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(testutil.KStatus(g, app)).To(Equal(kstatus.CurrentStatus))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Eventually(func() (string, error) { return get(fmt.Sprintf("http://%s:80/", app.Status.ClusterIP)) },
		10*time.Second, 200*time.Millisecond).Should(Equal("v1"))
}

// A spec change to the second image rolls out on real Pods: Reconciling
// while the new Pods start, Ready with the new generation only once they
// are ready; with maxUnavailable 0, a client requesting through the
// Service all along gets no failed request.
func TestRolloutToV2AnswersEveryRequest(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	app := application(ns, "roll", 2, appContainer())
	app.Spec.Deployment.Strategy = appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxUnavailable: new(intstr.FromInt32(0)), MaxSurge: new(intstr.FromInt32(1))},
	}
	// The old Pod leaves the Service's endpoints before it stops serving:
	// the app drains for 2 s after SIGTERM (test/app).
	app.Spec.Deployment.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](10)
	g.Expect(admin.Create(ctx(), app)).To(Succeed())
	waitReady(g, app)
	url := fmt.Sprintf("http://%s:80/", app.Status.ClusterIP)
	g.Eventually(func() (string, error) { return get(url) }, 10*time.Second, 200*time.Millisecond).Should(Equal("v1"))

	// A client requests through the Service every 20 ms from now until the
	// rollout is done and only v2 answers.
	var ok, failed atomic.Int64
	var mu sync.Mutex
	answers := map[string]int{}
	var failures []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			body, err := get(url)
			mu.Lock()
			if err != nil {
				failed.Add(1)
				failures = append(failures, time.Now().Format("15:04:05.000")+" "+err.Error())
			} else {
				ok.Add(1)
				answers[body]++
			}
			mu.Unlock()
		}
	}()

	g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
	app.Spec.Deployment.Template.Spec.Containers[0].Image = imageV2
	g.Expect(admin.Update(ctx(), app)).To(Succeed())
	generation := app.Generation
	start := time.Now()

	// Reconciling while the new ReplicaSet's Pods start.
	sawReconciling := false
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		if app.Status.ObservedGeneration == generation &&
			condition(app, sunappsv1.ConditionReconciling).Status == metav1.ConditionTrue {
			sawReconciling = true
			g.Expect(condition(app, sunappsv1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(testutil.KStatus(g, app)).To(Equal(kstatus.InProgressStatus))
		}
		g.Expect(sawReconciling).To(BeTrue(), "Reconciling for generation %d not seen yet", generation)
		ready := condition(app, sunappsv1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.ObservedGeneration).To(Equal(generation))
	}, 120*time.Second, 100*time.Millisecond).Should(Succeed())
	rollout := time.Since(start)
	// Ready means every Pod runs v2: the Service answers v2 only.
	for _, p := range appPods(g, ns, "roll") {
		if p.DeletionTimestamp == nil {
			g.Expect(p.Spec.Containers[0].Image).To(Equal(imageV2))
		}
	}
	g.Eventually(func(g Gomega) {
		for range 10 {
			g.Expect(get(url)).To(Equal("v2"))
		}
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	// The old Pods end after their drain; requests go on until they are gone.
	g.Eventually(func(g Gomega) { g.Expect(appPods(g, ns, "roll")).To(HaveLen(2)) },
		60*time.Second, 250*time.Millisecond).Should(Succeed())
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	t.Logf("Rollout v1 -> v2 Ready in %s; requests through the Service: %d answered (%v), %d failed",
		rollout.Round(100*time.Millisecond), ok.Load(), answers, failed.Load())
	g.Expect(answers).To(HaveKey("v1"))
	g.Expect(answers).To(HaveKey("v2"))
	g.Expect(failures).To(BeEmpty(), "failed requests:\n%s", strings.Join(failures, "\n"))
}

// A readiness probe turned off in a running container shows in the
// Application: the Deployment's Available goes False and Ready says
// DeploymentUnavailable (docs/conditions.md); turned on, Ready again.
func TestReadinessTurnedOffShowsInStatus(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	app := application(ns, "flaky", 1, appContainer())
	g.Expect(admin.Create(ctx(), app)).To(Succeed())
	waitReady(g, app)
	pods := appPods(g, ns, "flaky")
	g.Expect(pods).To(HaveLen(1))
	pod := fmt.Sprintf("http://%s:%d", pods[0].Status.PodIP, appPort)

	g.Expect(post(pod + "/ready/off")).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		ready := condition(app, sunappsv1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(sunappsv1.ReasonDeploymentUnavailable))
		g.Expect(ready.Message).To(Equal("0 of 1 Pods available, 0 ready"))
		g.Expect(condition(app, sunappsv1.ConditionAvailable).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(condition(app, sunappsv1.ConditionReconciling).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(testutil.KStatus(g, app)).To(Equal(kstatus.InProgressStatus))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	// The Service has no ready endpoint left: once kube-proxy has synced,
	// nothing answers through it.
	g.Eventually(func() error { _, err := get(fmt.Sprintf("http://%s:80/", app.Status.ClusterIP)); return err },
		10*time.Second, 100*time.Millisecond).Should(HaveOccurred())

	g.Expect(post(pod + "/ready/on")).To(Succeed())
	waitReady(g, app)
	g.Expect(condition(app, sunappsv1.ConditionAvailable).Status).To(Equal(metav1.ConditionTrue))
}

// A crash-looping image ends as Stalled: the Deployment exceeds its
// progress deadline, Ready says DeploymentDegraded with the Deployment's
// reason and the container's last state, and kstatus says Failed rather
// than InProgress forever.
func TestCrashLoopEndsStalled(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	app := application(ns, "crash", 1, appContainer("-crash"))
	app.Spec.Deployment.ProgressDeadlineSeconds = ptr.To[int32](15)
	g.Expect(admin.Create(ctx(), app)).To(Succeed())

	// The container really crashes, more than once.
	g.Eventually(func(g Gomega) {
		pods := appPods(g, ns, "crash")
		g.Expect(pods).To(HaveLen(1))
		g.Expect(pods[0].Status.ContainerStatuses).To(HaveLen(1))
		cs := pods[0].Status.ContainerStatuses[0]
		g.Expect(cs.RestartCount).To(BeNumerically(">=", 1))
		g.Expect(cs.LastTerminationState.Terminated).NotTo(BeNil())
		g.Expect(cs.LastTerminationState.Terminated.ExitCode).To(Equal(int32(1)))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		ready := condition(app, sunappsv1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(sunappsv1.ReasonDeploymentDegraded))
		g.Expect(ready.Message).To(ContainSubstring("ProgressDeadlineExceeded"))
		g.Expect(ready.Message).To(ContainSubstring(`container "app"`))
		g.Expect(ready.Message).To(ContainSubstring("exit code 1"))
		g.Expect(condition(app, sunappsv1.ConditionStalled).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(testutil.KStatus(g, app)).To(Equal(kstatus.FailedStatus))
	}, 90*time.Second, 500*time.Millisecond).Should(Succeed())
	t.Logf("Stalled: %s", condition(app, sunappsv1.ConditionReady).Message)
}

// waitReady waits until app is Ready for its current generation and
// refreshes it.
func waitReady(g Gomega, app *sunappsv1.Application) {
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		ready := condition(app, sunappsv1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s %s", ready.Reason, ready.Message)
		g.Expect(ready.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.ClusterIP).NotTo(BeEmpty())
	}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
}
