//go:build node

package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

const (
	operatorNamespace = "sunstrider-operator-system"
	operatorName      = "sunstrider-operator-controller-manager"
	helmNamespace     = "sunstrider-helm-node"
	helmRelease       = "sunstrider-operator"
)

// The operator deployed as Pods that Kubernetes schedules onto the real
// node, twice, as users deploy it: `make deploy` with the locally built
// image, then `helm install` of dist/chart. Its replicas elect a leader
// through their Lease, the API server calls the webhooks through their
// Service, the leader reconciles an Application of real Pods, and the
// chart's `helm test` hook Pod really runs `manager check-release`: it
// passes against the release and fails once the webhooks are gone.
//
// It replaces make dev's local operator, so it runs last (files run in
// name order, and this one's comes last).
func TestOperatorRunsOnTheRealNode(t *testing.T) {
	image := os.Getenv("OPERATOR_IMAGE")
	kustomize, helm := os.Getenv("KUSTOMIZE"), os.Getenv("HELM")
	if image == "" || kustomize == "" || helm == "" {
		t.Fatal("OPERATOR_IMAGE, KUSTOMIZE and HELM must be set: run the suite with `make test-node`")
	}
	stopDevOperator(t)

	t.Run("make deploy", func(t *testing.T) {
		g := NewWithT(t)
		dumpOnFailure(t, operatorNamespace)
		// Its Pods go to the real node (hack/real-node/placement.yaml).
		labelForRealNode(t, operatorNamespace)
		out, err := makeInClone("deploy", "IMG="+image)
		g.Expect(err).NotTo(HaveOccurred(), "make deploy:\n%s", out)

		pods := waitOperator(t, operatorNamespace, operatorName, 2)
		checkLeaderAndWebhooks(t, operatorNamespace, pods)
	})

	t.Run("helm install and helm test", func(t *testing.T) {
		g := NewWithT(t)
		dumpOnFailure(t, helmNamespace)
		// One install per cluster (fixed names): make deploy's goes first,
		// Applications and all (make undeploy).
		out, err := makeInClone("undeploy", "ignore-not-found=true")
		g.Expect(err).NotTo(HaveOccurred(), "make undeploy:\n%s", out)

		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: helmNamespace, Labels: map[string]string{
			realKey: "true", "pod-security.kubernetes.io/enforce": "restricted"}}}
		g.Expect(admin.Create(ctx(), ns)).To(Succeed())
		repo, tag, _ := strings.Cut(image, ":")
		helmHome := t.TempDir()
		helmCmd := func(args ...string) (string, error) {
			return shEnv([]string{"HELM_CONFIG_HOME=" + helmHome, "HELM_CACHE_HOME=" + helmHome, "HELM_DATA_HOME=" + helmHome},
				helm, args...)
		}
		start := time.Now()
		out, err = helmCmd("install", helmRelease, "dist/chart", "-n", helmNamespace, "--wait", "--timeout=3m",
			"--set", "image.repository="+repo+",image.tag="+tag)
		g.Expect(err).NotTo(HaveOccurred(), "helm install:\n%s", out)
		t.Logf("helm install --wait: %s", time.Since(start).Round(100*time.Millisecond))
		t.Cleanup(func() { _, _ = helmCmd("uninstall", helmRelease, "-n", helmNamespace, "--wait") })

		pods := waitOperator(t, helmNamespace, operatorName, 2)
		checkLeaderAndWebhooks(t, helmNamespace, pods)

		// helm test: the hook Pod runs `manager check-release` on the node.
		out, err = helmCmd("test", helmRelease, "-n", helmNamespace, "--timeout=2m")
		g.Expect(err).NotTo(HaveOccurred(), "helm test:\n%s", out)
		g.Expect(out).To(MatchRegexp(`Phase:\s+Succeeded`))
		// The passed Job is deleted (its hook policy); its Pod's events
		// say where its container ran.
		g.Eventually(func(g Gomega) {
			var events corev1.EventList
			g.Expect(admin.List(ctx(), &events, client.InNamespace(helmNamespace))).To(Succeed())
			var scheduled, started bool
			for _, e := range events.Items {
				if e.InvolvedObject.Kind != "Pod" || !strings.HasPrefix(e.InvolvedObject.Name, helmRelease+"-test-webhooks") {
					continue
				}
				scheduled = scheduled || e.Reason == "Scheduled" && strings.HasSuffix(e.Message, " to "+realNode)
				started = started || e.Reason == "Started"
			}
			g.Expect(scheduled).To(BeTrue(), "the test Pod was scheduled to %s", realNode)
			g.Expect(started).To(BeTrue(), "its container started")
		}, 10*time.Second, 250*time.Millisecond).Should(Succeed())
		t.Logf("helm test passed; its Pod ran on %s", realNode)

		// The webhooks gone, the same hook fails.
		for _, kind := range []string{"validating", "mutating"} {
			out, err := sh(kubectl, "delete", kind+"webhookconfiguration", "sunstrider-operator-"+kind+"-webhook-configuration")
			g.Expect(err).NotTo(HaveOccurred(), "kubectl delete %s:\n%s", kind, out)
		}
		// Without them, only the CRD's schema judges: it admits what the
		// webhook refused above.
		out, err = shIn(noImageApplication, kubectl, "apply", "--dry-run=server", "-f", "-")
		g.Expect(err).NotTo(HaveOccurred(), "without webhooks:\n%s", out)
		out, err = helmCmd("test", helmRelease, "-n", helmNamespace, "--timeout=2m")
		g.Expect(err).To(HaveOccurred(), "helm test without webhooks:\n%s", out)
		t.Logf("helm test without the webhooks failed, as it must:\n%s", out)
		// The failed Job is kept: its Pod ran check-release on the real
		// node, and the container itself exited non-zero.
		hookFailedOnRealNode(g, helmNamespace)
	})
}

// makeInClone runs make with target in a clone of the repository's HEAD,
// with the tools the suite was given: make deploy sets the image in
// config/manager (as kubebuilder's scaffold does), which must not change
// the tree the other suites read at the same time.
func makeInClone(target string, vars ...string) (string, error) {
	if cloneDir == "" {
		dir, err := os.MkdirTemp(workDir, "clone-")
		if err != nil {
			return "", err
		}
		if out, err := sh("git", "clone", "-q", root, dir); err != nil {
			return out, err
		}
		cloneDir = dir
	}
	args := append([]string{"--no-print-directory", "-C", cloneDir, target,
		"KUBECTL=" + kubectl, "KUSTOMIZE=" + os.Getenv("KUSTOMIZE"),
		"CONTROLLER_GEN=" + filepath.Join(root, "bin", "controller-gen")}, vars...)
	return sh("make", args...)
}

// cloneDir is makeInClone's clone, made once.
var cloneDir string

// noImageApplication has a container without an image: the validating
// webhook refuses it, the CRD's schema alone would not.
const noImageApplication = `apiVersion: apps.sunstrider.cn/v1
kind: Application
metadata: {name: no-image, namespace: default}
spec:
  deployment:
    template:
      spec:
        containers: [{name: app}]
`

// stopDevOperator stops make dev's operator, a local process that would
// otherwise reconcile beside the deployed one.
func stopDevOperator(t *testing.T) {
	t.Helper()
	pidFile := filepath.Join(os.Getenv("DEV_DIR"), "manager.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("make dev's operator: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("%s: %v", pidFile, err)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	NewWithT(t).Eventually(func() error { return syscall.Kill(pid, 0) }, 30*time.Second, 100*time.Millisecond).
		Should(HaveOccurred(), "make dev's operator (pid %d) exits", pid)
	_ = os.Remove(pidFile)
}

// labelForRealNode labels an existing namespace (or creates it labelled)
// so that its Pods land on the real node.
func labelForRealNode(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{}
	err := admin.Get(ctx(), client.ObjectKey{Name: name}, ns)
	if apierrors.IsNotFound(err) {
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		err = nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[realKey] = "true"
	if ns.ResourceVersion == "" {
		err = admin.Create(ctx(), ns)
	} else {
		err = admin.Update(ctx(), ns)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// waitOperator waits until the operator's Deployment in ns has replicas
// ready Pods, all real containers on the real node, and returns them.
func waitOperator(t *testing.T, ns, name string, replicas int) []corev1.Pod {
	t.Helper()
	g := NewWithT(t)
	var pods []corev1.Pod
	start := time.Now()
	g.Eventually(func(g Gomega) {
		var d appsv1.Deployment
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: ns, Name: name}, &d)).To(Succeed())
		g.Expect(d.Status.ReadyReplicas).To(Equal(int32(replicas)))
		var list corev1.PodList
		g.Expect(admin.List(ctx(), &list, client.InNamespace(ns),
			client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		pods = nil
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				pods = append(pods, p)
			}
		}
		g.Expect(pods).To(HaveLen(replicas))
		for _, p := range pods {
			g.Expect(p.Spec.NodeName).To(Equal(realNode))
			for _, cs := range p.Status.ContainerStatuses {
				g.Expect(cs.Ready).To(BeTrue(), "%s/%s ready", p.Name, cs.Name)
				g.Expect(cs.ContainerID).To(HavePrefix("containerd://"))
			}
		}
	}, 3*time.Minute, time.Second).Should(Succeed())
	t.Logf("%d operator Pods ready on %s after %s", replicas, realNode, time.Since(start).Round(100*time.Millisecond))
	return pods
}

// checkLeaderAndWebhooks: one of pods holds the leader Lease; the API
// server calls the validating webhook through its Service (its refusal
// names the field); the leader reconciles an Application of real Pods.
func checkLeaderAndWebhooks(t *testing.T, ns string, pods []corev1.Pod) {
	t.Helper()
	g := NewWithT(t)
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	g.Eventually(func(g Gomega) {
		var leases coordinationv1.LeaseList
		g.Expect(admin.List(ctx(), &leases, client.InNamespace(ns))).To(Succeed())
		var holders []string
		for _, l := range leases.Items {
			if l.Spec.HolderIdentity != nil {
				holder, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
				holders = append(holders, holder)
			}
		}
		g.Expect(holders).To(ContainElement(BeElementOf(names)))
	}, 60*time.Second, 500*time.Millisecond).Should(Succeed())

	// The webhook configuration sends the API server to the Service, and
	// the refusal of an image-less container is the webhook's alone (the
	// CRD's schema admits it: the helm part shows it once they are gone).
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	g.Expect(admin.Get(ctx(), client.ObjectKey{Name: "sunstrider-operator-validating-webhook-configuration"}, &vwc)).
		To(Succeed())
	for _, w := range vwc.Webhooks {
		g.Expect(w.ClientConfig.Service).NotTo(BeNil(), "webhook %s", w.Name)
		g.Expect(w.ClientConfig.Service.Namespace).To(Equal(ns))
	}
	g.Eventually(func(g Gomega) {
		out, err := shIn(noImageApplication, kubectl, "apply", "-f", "-")
		g.Expect(err).To(HaveOccurred(), "an Application without an image:\n%s", out)
		g.Expect(out).To(ContainSubstring("spec.deployment.template.spec.containers[0].image: Required value"))
	}, 30*time.Second, time.Second).Should(Succeed())

	appNS := namespace(t)
	a := application(appNS, "in-cluster", 1, appContainer())
	g.Expect(admin.Create(ctx(), a)).To(Succeed())
	waitReady(g, a)
	g.Eventually(func() (string, error) { return get(fmt.Sprintf("http://%s:80/", a.Status.ClusterIP)) },
		10*time.Second, 200*time.Millisecond).Should(Equal("v1"))
	g.Expect(admin.Delete(ctx(), &sunappsv1.Application{ObjectMeta: a.ObjectMeta})).To(Succeed())
}

// hookFailedOnRealNode: the chart's test hook Pod ran on the real node and
// its container exited non-zero.
func hookFailedOnRealNode(g Gomega, ns string) {
	var list corev1.PodList
	g.Expect(admin.List(ctx(), &list, client.InNamespace(ns),
		client.MatchingLabels{"app.kubernetes.io/name": "sunstrider-operator-test"})).To(Succeed())
	g.Expect(list.Items).NotTo(BeEmpty())
	for _, p := range list.Items {
		g.Expect(p.Spec.NodeName).To(Equal(realNode), "hook Pod %s", p.Name)
		g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
		term := p.Status.ContainerStatuses[0].State.Terminated
		g.Expect(term).NotTo(BeNil(), "hook Pod %s ended", p.Name)
		g.Expect(term.ExitCode).NotTo(BeZero())
		g.Expect(p.Status.ContainerStatuses[0].ContainerID).To(HavePrefix("containerd://"))
	}
}
