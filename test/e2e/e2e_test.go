//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	examplev1alpha1 "sunstrider.cn/operator/api/example/v1alpha1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

const (
	wait     = 90 * time.Second
	interval = 250 * time.Millisecond
)

func init() {
	SetDefaultEventuallyTimeout(wait)
	SetDefaultEventuallyPollingInterval(interval)
}

// The tests below run in file order: deploy, then run the operator as the
// deployed ServiceAccount, then exercise the seeds' objects. Only
// chart_test.go sorts before this file: it leaves the cluster bare.

func TestDeployAndHelmApplyCleanlyUnderRestrictedPodSecurity(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, operatorNamespace, "deployments", "replicasets", "pods")

	manifests := mustSh(t, nil, kustomize, "build", "config/default")
	mustSh(t, []byte(manifests), kubectl, "apply", "--server-side", "--force-conflicts", "-f", "-")

	ns := &corev1.Namespace{}
	g.Expect(admin.Get(ctx(), client.ObjectKey{Name: operatorNamespace}, ns)).To(Succeed())
	g.Expect(ns.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))

	// The controller-manager creates the manager Pods, Pod Security admission
	// judges them against `restricted`, kwok runs them.
	g.Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		key := client.ObjectKey{Namespace: operatorNamespace, Name: "sunstrider-operator-controller-manager"}
		g.Expect(admin.Get(ctx(), key, d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
	}).Should(Succeed())

	// Enforcement is real: a privileged Pod is refused in that namespace.
	out, err := sh(t, []byte(`apiVersion: v1
kind: Pod
metadata: {name: privileged, namespace: `+operatorNamespace+`}
spec:
  containers: [{name: c, image: busybox, securityContext: {privileged: true}}]
`), kubectl, "apply", "-f", "-")
	g.Expect(err).To(HaveOccurred())
	g.Expect(out).To(ContainSubstring("violates PodSecurity \"restricted"))

	// The Helm chart renders the same install and the API server accepts it.
	// The cluster's version: the chart requires 1.31 or newer, and a helm
	// built by `go install` (bin/helm) assumes v1.20 without a cluster.
	chart := mustSh(t, nil, helm, "template", "sunstrider-operator", "dist/chart", "--namespace", operatorNamespace,
		"--kube-version", serverVersion(t))
	mustSh(t, []byte(chart), kubectl, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-")
}

func TestOperatorRunsAsItsServiceAccount(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, operatorNamespace, "secrets", "leases")

	// Webhooks and conversion reach the local process instead of the
	// in-cluster Pods (kwok runs no container).
	dev := mustSh(t, nil, kustomize, "build", "config/dev")
	redirected := mustSh(t, []byte(dev), "go", "run", "./hack/devconfig", "-base",
		fmt.Sprintf("https://localhost:%d", webhookPort))
	mustSh(t, []byte(redirected), kubectl, "apply", "--server-side", "--force-conflicts", "-f", "-")

	token := strings.TrimSpace(mustSh(t, nil, kubectl, "create", "token", serviceAccount,
		"-n", operatorNamespace, "--duration=2h"))
	kubeconfig := serviceAccountKubeconfig(t, token)
	startOperator(t, kubeconfig)

	// The shipped RBAC is sufficient (the operator is ready: it rotated its
	// certificate, injected the CA, and its caches synced) and no wider.
	sa, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	saClient, err := client.New(sa, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	err = saClient.List(ctx(), &corev1.SecretList{}, client.InNamespace("kube-system"))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing Secrets in kube-system: %v", err)
	err = saClient.Delete(ctx(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "deleting a namespace: %v", err)
	certSecret := client.ObjectKey{Namespace: operatorNamespace, Name: "sunstrider-operator-webhook-server-cert"}
	g.Expect(saClient.Get(ctx(), certSecret, &corev1.Secret{})).To(Succeed())
}

// serviceAccountKubeconfig writes a kubeconfig for the admin kubeconfig's
// cluster that authenticates with token.
func serviceAccountKubeconfig(t *testing.T, token string) string {
	t.Helper()
	g := NewWithT(t)
	raw, err := clientcmd.LoadFromFile(os.Getenv("KUBECONFIG"))
	g.Expect(err).NotTo(HaveOccurred())
	cluster := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = cluster
	cfg.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["operator"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "operator"}
	cfg.CurrentContext = "operator"
	path := filepath.Join(workDir, "operator.kubeconfig")
	g.Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

func TestSeedApplicationBecomesReadyAndIsGarbageCollected(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, "default", "applications", "deployments", "replicasets", "pods", "services")

	mustSh(t, nil, kubectl, "apply", "-f", "config/samples/apps_v1_application.yaml")
	key := client.ObjectKey{Namespace: "default", Name: "nginx-sample"}
	g.Eventually(func(g Gomega) {
		app := &sunappsv1.Application{}
		g.Expect(admin.Get(ctx(), key, app)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, sunappsv1.ConditionReady)).To(BeTrue())
		g.Expect(app.Status.Workflow.AvailableReplicas).To(Equal(int32(1)))
		svc := &corev1.Service{}
		g.Expect(admin.Get(ctx(), key, svc)).To(Succeed())
		g.Expect(svc.Spec.Ports[0].NodePort).To(Equal(int32(30080)))
	}).Should(Succeed())

	mustSh(t, nil, kubectl, "delete", "application", "nginx-sample", "-n", "default", "--wait=false")
	// The garbage collector removes the Deployment, its ReplicaSet and Pods, and the Service.
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(admin.Get(ctx(), key, &appsv1.Deployment{}))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(admin.Get(ctx(), key, &corev1.Service{}))).To(BeTrue())
		rs := &appsv1.ReplicaSetList{}
		g.Expect(admin.List(ctx(), rs, client.InNamespace("default"), client.MatchingLabels{"app": "nginx"})).To(Succeed())
		g.Expect(rs.Items).To(BeEmpty())
		pods := &corev1.PodList{}
		g.Expect(admin.List(ctx(), pods, client.InNamespace("default"), client.MatchingLabels{"app": "nginx"})).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
	}).Should(Succeed())
}

func TestFunnyJoeMakesMyCustomResourceHealthy(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, "default", "mycustomresources", "pods")

	mustSh(t, nil, kubectl, "apply", "-f", "config/samples/poc_v1_mycustomresource.yaml")
	key := client.ObjectKey{Namespace: "default", Name: "my-custom-resource-01"}
	healthy := func(g Gomega) bool {
		cr := &pocv1.MyCustomResource{}
		g.Expect(admin.Get(ctx(), key, cr)).To(Succeed())
		return cr.Status.Healthy
	}
	// Healthy is false before any reconcile too (the zero value): first the
	// operator's own word that the friend is missing.
	g.Eventually(func(g Gomega) {
		cr := &pocv1.MyCustomResource{}
		g.Expect(admin.Get(ctx(), key, cr)).To(Succeed())
		g.Expect(cr.Status.ObservedGeneration).To(Equal(cr.Generation))
		found := meta.FindStatusCondition(cr.Status.Conditions, pocv1.ConditionFriendFound)
		g.Expect(found).NotTo(BeNil())
		g.Expect(found.Reason).To(Equal(pocv1.ReasonPodNotFound))
		g.Expect(cr.Status.Healthy).To(BeFalse())
	}).Should(Succeed())
	g.Consistently(healthy, "1s").Should(BeFalse())
	mustSh(t, nil, kubectl, "run", "funny-joe", "-n", "default", "--image=nginx")
	g.Eventually(healthy).Should(BeTrue())
	mustSh(t, nil, kubectl, "delete", "pod", "funny-joe", "-n", "default", "--wait=false")
	g.Eventually(healthy).Should(BeFalse())
}

func TestExampleDrinkGetsItsConfigMapAndConverts(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, "default", "drinks", "configmaps")

	mustSh(t, nil, kubectl, "apply", "-f", "config/samples/example_v1_drink.yaml")
	g.Eventually(func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: "example-drink"}, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("name", "my-drink"))
		g.Expect(cm.Data).To(HaveKeyWithValue("drink", "coffee"))
	}).Should(Succeed())

	// Written as v1alpha1, read back as v1 (through the conversion webhook):
	// the order "<drink> for <name>" split at its first " for "
	// (api/example/v1alpha1/drink_conversion.go), no stash annotation
	// reaching v1.
	const alphaSample = "config/samples/example_v1alpha1_drink.yaml"
	alpha := &examplev1alpha1.Drink{}
	alphaYAML, err := os.ReadFile(filepath.Join(root, alphaSample))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(yaml.Unmarshal(alphaYAML, alpha)).To(Succeed())
	wantSpec := examplev1.DrinkSpec{Drink: "coffee", Name: "my-drink"}
	g.Expect(alpha.Spec.Order).To(Equal(wantSpec.Drink+" for "+wantSpec.Name),
		"%s changed: this test expects its order to read as %+v", alphaSample, wantSpec)
	mustSh(t, nil, kubectl, "apply", "-f", alphaSample)
	alphaKey := client.ObjectKey{Namespace: "default", Name: alpha.Name}
	asV1 := &examplev1.Drink{}
	g.Expect(admin.Get(ctx(), alphaKey, asV1)).To(Succeed())
	g.Expect(asV1.Spec).To(Equal(wantSpec), "Drink %s written as v1alpha1 %q, read as v1", alpha.Name, alpha.Spec.Order)
	g.Expect(asV1.Annotations).NotTo(HaveKey(examplev1alpha1.SpecAnnotation), "the v1alpha1 stash never reaches v1")
	// Read back as v1alpha1: the same order, nothing stashed (the order
	// reads as the v1 spec).
	asAlpha := &examplev1alpha1.Drink{}
	g.Expect(admin.Get(ctx(), alphaKey, asAlpha)).To(Succeed())
	g.Expect(asAlpha.Spec.Order).To(Equal(alpha.Spec.Order), "Drink %s read back as v1alpha1", alpha.Name)
	g.Expect(asAlpha.Annotations).NotTo(HaveKey(examplev1alpha1.SpecAnnotation),
		"Drink %s read back as v1alpha1", alpha.Name)
	g.Eventually(func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(admin.Get(ctx(), alphaKey, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("name", wantSpec.Name))
		g.Expect(cm.Data).To(HaveKeyWithValue("drink", wantSpec.Drink))
	}).Should(Succeed(), "the ConfigMap of Drink %s, written as v1alpha1", alpha.Name)

	// Written as v1, read as v1alpha1: "<drink> for <name>".
	v1Drink := &examplev1alpha1.Drink{}
	g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: "default", Name: "example-drink"}, v1Drink)).To(Succeed())
	g.Expect(v1Drink.Spec.Order).To(Equal("coffee for my-drink"),
		"Drink example-drink (name my-drink, drink coffee) read as v1alpha1")
	g.Expect(v1Drink.Annotations).NotTo(HaveKey(examplev1alpha1.SpecAnnotation), "Drink example-drink read as v1alpha1")
}

func TestGuestbookElectsOneActiveAndFailsOver(t *testing.T) {
	g := NewWithT(t)
	dumpOnFailure(t, "default", "guestbooks", "statefulsets", "pods")

	mustSh(t, nil, kubectl, "apply", "-f", "config/samples/webapp_v1_guestbook.yaml")
	gb := &webappv1.Guestbook{}
	activePod := func(g Gomega) *corev1.Pod {
		pods := &corev1.PodList{}
		g.Expect(admin.List(ctx(), pods, client.InNamespace("default"),
			client.MatchingLabels{"webapp.my.domain/guestbook": "guestbook-sample"})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(3))
		var active []corev1.Pod
		for _, p := range pods.Items {
			g.Expect(isReady(&p)).To(BeTrue(), "pod %s ready", p.Name)
			if p.Labels["webapp.my.domain/role"] == "active" {
				active = append(active, p)
			}
		}
		g.Expect(active).To(HaveLen(1))
		g.Expect(admin.Get(ctx(), client.ObjectKey{Name: "guestbook-sample"}, gb)).To(Succeed())
		g.Expect(gb.Status.Active).To(Equal(active[0].Name))
		g.Expect(gb.Status.Standby).To(HaveLen(2))
		return &active[0]
	}
	var first *corev1.Pod
	g.Eventually(func(g Gomega) { first = activePod(g) }).Should(Succeed())

	g.Expect(admin.Delete(ctx(), first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		now := activePod(g)
		g.Expect(now.Name).NotTo(Equal(first.Name), "a standby is promoted")
	}).Should(Succeed())
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
