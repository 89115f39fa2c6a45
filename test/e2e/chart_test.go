//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The Helm release of TestHelmInstallUpgradeTestUninstall, in a namespace of
// its own.
const (
	helmRelease   = "sunstrider-operator"
	helmNamespace = "sunstrider-helm-e2e"
)

// chartCRDs are every CRD the chart installs.
var chartCRDs = append(slices.Clone(quickStartCRDs), "operatorconfigurations.config.sunstrider.cn")

// TestHelmInstallUpgradeTestUninstall installs dist/chart with the helm
// binary as a user does, runs the operator as the chart's ServiceAccount
// (kwok runs no container: the Deployment's Pods are Ready but empty, so the
// manager runs locally, as for the rest of the suite), upgrades the release
// with changed values, runs `helm test` and uninstalls it.
//
// Its place in the suite: it needs a cluster without the operator (the
// chart's cluster-scoped objects have the fixed names of the suite's
// deployment), so it runs first (this file sorts before e2e_test.go) on the
// bare cluster `make test-e2e` made, and leaves it bare again, as
// TestQuickStart does, for TestDeployAndHelmApplyCleanlyUnderRestrictedPodSecurity.
// Should it run after the suite's deployment, it stops the suite's
// operator and takes the cluster back to bare first.
func TestHelmInstallUpgradeTestUninstall(t *testing.T) {
	began := time.Now()
	g := NewWithT(t)
	helmHome := filepath.Join(workDir, "helm")
	certDir := filepath.Join(workDir, "certs-helm")
	// Cleanups run last first: the dump sees the failure's cluster.
	t.Cleanup(func() { bareAfterHelm(t, helmHome, certDir) })
	dumpOnFailure(t, helmNamespace, "deployments", "replicasets", "pods", "jobs")

	stopOperator()
	if out, err := sh(t, []byte(mustSh(t, nil, kustomize, "build", "config/default")),
		kubectl, "delete", "--ignore-not-found", "--wait", "--timeout=120s", "-f", "-"); err != nil {
		t.Fatalf("taking the cluster back to bare: %v\n%s", err, out)
	}
	g.Eventually(leftBehind).Should(BeEmpty(), "a bare cluster to start from")

	// A wrong value fails at once, saying which (values.schema.json), and
	// installs nothing.
	out, err := helmCmd(helmHome, "install", helmRelease, "dist/chart", "-n", helmNamespace, "--create-namespace",
		"--set", "replicas=abc")
	g.Expect(err).To(HaveOccurred(), "helm install --set replicas=abc:\n%s", out)
	g.Expect(out).To(ContainSubstring("at '/replicas': got string, want integer"))
	g.Expect(leftBehind()).To(BeEmpty(), "a refused install leaves nothing")

	// helm install: CRDs established, every object of the release applied.
	step := time.Now()
	mustHelm(t, helmHome, "install", helmRelease, "dist/chart", "-n", helmNamespace, "--create-namespace",
		"--wait", "--timeout=90s",
		"--set", "image.repository=example.com/sunstrider-operator,image.tag=e2e",
		"--set", "crds.keep=false",
		"--set-string", "configuration.conflictRecheckInterval=45s")
	t.Logf("helm install --wait: %s", time.Since(step).Round(time.Millisecond))
	waitEstablished(g)
	manifest := mustHelm(t, helmHome, "get", "manifest", helmRelease, "-n", helmNamespace)
	applied := mustSh(t, []byte(manifest), kubectl, "get", "-f", "-", "-o", "name")
	g.Expect(strings.Count(applied, "\n")).To(Equal(strings.Count(manifest, "\nkind: ")),
		"every object of the release exists:\n%s", applied)
	// The policy confining the manager's Pod patches (rbac.confinePodPatches,
	// on by default) names the chart's ServiceAccount in the release's
	// namespace.
	g.Expect(mustSh(t, nil, kubectl, "get", "validatingadmissionpolicy", podPolicy,
		"-o", "jsonpath={.spec.matchConditions[*].expression}")).To(Equal(
		"request.userInfo.username == 'system:serviceaccount:" + helmNamespace + ":" + serviceAccount + "'"))
	g.Expect(mustSh(t, nil, kubectl, "get", "validatingadmissionpolicybinding", podPolicy,
		"-o", "jsonpath={.spec.policyName}")).To(Equal(podPolicy))
	// So does the one confining its other writes (rbac.confineWrites).
	g.Expect(mustSh(t, nil, kubectl, "get", "validatingadmissionpolicy", writePolicy,
		"-o", "jsonpath={.spec.matchConditions[*].expression}")).To(Equal(
		"request.userInfo.username == 'system:serviceaccount:" + helmNamespace + ":" + serviceAccount + "'"))
	g.Expect(mustSh(t, nil, kubectl, "get", "validatingadmissionpolicybinding", writePolicy,
		"-o", "jsonpath={.spec.policyName}")).To(Equal(writePolicy))
	for _, name := range chartCRDs {
		crd := customResourceDefinition(g, name)
		g.Expect(crd.GetAnnotations()).To(HaveKeyWithValue("meta.helm.sh/release-name", helmRelease), name)
		g.Expect(crd.GetAnnotations()).NotTo(HaveKey("helm.sh/resource-policy"), "%s with crds.keep=false", name)
	}
	deployment := client.ObjectKey{Namespace: helmNamespace, Name: "sunstrider-operator-controller-manager"}
	d := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), deployment, d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
	}, 10*time.Second).Should(Succeed(), "helm install --wait waited for the Deployment")
	g.Expect(d.Labels).To(HaveKeyWithValue("app.kubernetes.io/part-of", "sunstrider-operator"))
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("example.com/sunstrider-operator:e2e"))

	// From now on the chart's Pods are judged by the "restricted" Pod
	// Security Standard.
	mustSh(t, nil, kubectl, "label", "namespace", helmNamespace, "--overwrite",
		"pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/enforce-version=latest")

	// The operator, as the chart's ServiceAccount with the chart's RBAC,
	// from the chart's initial configuration: it makes its certificate and
	// injects the CA.
	cm := &corev1.ConfigMap{}
	g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: helmNamespace,
		Name: "sunstrider-operator-initial-configuration"}, cm)).To(Succeed())
	initial := filepath.Join(workDir, "helm-configuration.yaml")
	g.Expect(os.WriteFile(initial, []byte(cm.Data["configuration.yaml"]), 0o600)).To(Succeed())
	token := strings.TrimSpace(mustSh(t, nil, kubectl, "create", "token", serviceAccount,
		"-n", helmNamespace, "--duration=1h"))
	startOperatorWith(t, serviceAccountKubeconfig(t, token), operatorRun{
		namespace: helmNamespace, certDir: certDir, log: filepath.Join(workDir, "manager-helm.log"),
		initialConfiguration: initial,
	})
	config := &unstructured.Unstructured{}
	config.SetAPIVersion("config.sunstrider.cn/v1alpha1")
	config.SetKind("OperatorConfiguration")
	g.Expect(admin.Get(ctx(), client.ObjectKey{Name: "default"}, config)).To(Succeed())
	g.Expect(config.Object["spec"]).To(HaveKeyWithValue("conflictRecheckInterval", "45s"),
		"the chart's configuration: values reach the OperatorConfiguration")
	var caBefore map[string]string
	g.Eventually(func(g Gomega) {
		caBefore = caBundles(g)
	}).Should(Succeed(), "the operator injected its CA")
	secret := client.ObjectKey{Namespace: helmNamespace, Name: "sunstrider-operator-webhook-server-cert"}
	certBefore := &corev1.Secret{}
	g.Expect(admin.Get(ctx(), secret, certBefore)).To(Succeed())
	g.Expect(certBefore.Data).NotTo(BeEmpty(), "the operator wrote its certificate into the chart's Secret")

	// An older chart's CRD, as the upgrade finds it: a printer column less.
	mustSh(t, nil, kubectl, "patch", "crd", "drinks.example.com", "--type=json",
		"-p", `[{"op":"remove","path":"/spec/versions/0/additionalPrinterColumns"}]`)

	// helm upgrade with changed values: they reach the Deployment, the
	// webhook configurations and the CRDs; the injected CA and the
	// operator's certificate stay.
	step = time.Now()
	mustHelm(t, helmHome, "upgrade", helmRelease, "dist/chart", "-n", helmNamespace, "--reuse-values",
		"--wait", "--timeout=90s",
		"--set", "replicas=3,webhook.timeoutSeconds=10,crds.keep=true",
		"--set-json", `extraEnv=[{"name":"HELM_E2E","value":"upgraded"}]`)
	t.Logf("helm upgrade --wait: %s", time.Since(step).Round(time.Millisecond))
	g.Expect(admin.Get(ctx(), deployment, d)).To(Succeed())
	g.Expect(*d.Spec.Replicas).To(Equal(int32(3)))
	g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "HELM_E2E", Value: "upgraded"}))
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), deployment, d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(int32(3)))
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(3)))
		g.Expect(d.Status.Replicas).To(Equal(int32(3)), "the old Pods are gone")
	}, 10*time.Second).Should(Succeed(), "the new Pods admitted under restricted and rolled out")
	for _, kind := range []string{"mutatingwebhookconfiguration", "validatingwebhookconfiguration"} {
		out := mustSh(t, nil, kubectl, "get", kind, "sunstrider-operator-"+strings.TrimSuffix(kind, "webhookconfiguration")+
			"-webhook-configuration", "-o", "jsonpath={.webhooks[*].timeoutSeconds}")
		g.Expect(strings.Fields(out)).To(HaveEach("10"), "%s timeoutSeconds", kind)
	}
	for _, name := range chartCRDs {
		g.Expect(customResourceDefinition(g, name).GetAnnotations()).To(
			HaveKeyWithValue("helm.sh/resource-policy", "keep"), "%s after the upgrade to crds.keep=true", name)
	}
	columns := mustSh(t, nil, kubectl, "get", "crd", "drinks.example.com",
		"-o", "jsonpath={.spec.versions[0].additionalPrinterColumns[*].name}")
	g.Expect(columns).To(ContainSubstring("Drink"), "the upgrade brought the CRD up to the chart's")
	g.Expect(caBundles(g)).To(Equal(caBefore), "helm upgrade keeps the injected CA bundles")
	certAfter := &corev1.Secret{}
	g.Expect(admin.Get(ctx(), secret, certAfter)).To(Succeed())
	g.Expect(certAfter.Data).To(Equal(certBefore.Data), "helm upgrade keeps the operator's certificate")

	// helm test. kwok runs no container: it completes the Job's Pod as
	// succeeded without running `manager check-release`, so this passing
	// proves only what Helm and the API server do with the hook: its
	// ServiceAccount, Role, RoleBinding and Job are created, the Pod is
	// admitted under restricted, and a passing test leaves nothing behind.
	// That the check itself runs, passes against running replicas and
	// fails without them is test/container's (HelmTestHook*), which runs
	// this hook's Pod in podman.
	step = time.Now()
	out = mustHelm(t, helmHome, "test", helmRelease, "-n", helmNamespace, "--timeout=60s")
	t.Logf("helm test: %s", time.Since(step).Round(time.Millisecond))
	g.Expect(out).To(MatchRegexp(`TEST SUITE:\s+sunstrider-operator-test-webhooks\n`))
	g.Expect(out).To(MatchRegexp(`Phase:\s+Succeeded`))
	g.Expect(out).NotTo(MatchRegexp(`Phase:\s+Failed`))
	g.Eventually(func() []string {
		var left []string
		for _, kind := range []struct{ apiVersion, kind string }{
			{"v1", "ServiceAccount"}, {"rbac.authorization.k8s.io/v1", "Role"},
			{"rbac.authorization.k8s.io/v1", "RoleBinding"}, {"batch/v1", "Job"},
		} {
			err := admin.Get(ctx(), client.ObjectKey{Namespace: helmNamespace, Name: "sunstrider-operator-test-webhooks"},
				&unstructured.Unstructured{Object: map[string]any{"apiVersion": kind.apiVersion, "kind": kind.kind}})
			if !apierrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("%s: %v", kind.kind, err))
			}
		}
		return left
	}).Should(BeEmpty(), "the passed test's Job, ServiceAccount, Role and RoleBinding are deleted (hook-delete-policy)")

	// helm uninstall, once the operator has stopped (as its Pods do): every
	// object of the release goes but the CRDs (helm.sh/resource-policy:
	// keep), and so the OperatorConfiguration.
	stopOperator()
	manifest = mustHelm(t, helmHome, "get", "manifest", helmRelease, "-n", helmNamespace)
	step = time.Now()
	out = mustHelm(t, helmHome, "uninstall", helmRelease, "-n", helmNamespace, "--wait", "--timeout=60s")
	g.Expect(out).To(ContainSubstring("kept due to the resource policy"))
	t.Logf("helm uninstall --wait: %s", time.Since(step).Round(time.Millisecond))
	left := mustSh(t, []byte(manifest), kubectl, "get", "-f", "-", "--ignore-not-found", "-o", "name")
	wantLeft := make([]string, 0, len(chartCRDs))
	for _, name := range chartCRDs {
		wantLeft = append(wantLeft, "customresourcedefinition.apiextensions.k8s.io/"+name)
	}
	g.Expect(strings.Fields(left)).To(ConsistOf(wantLeft), "what helm uninstall leaves")
	g.Expect(admin.Get(ctx(), client.ObjectKey{Name: "default"}, config)).To(Succeed(),
		"the OperatorConfiguration stays with its CRD")
	g.Expect(strings.TrimSpace(mustHelm(t, helmHome, "list", "-n", helmNamespace, "--all", "-q"))).To(BeEmpty(),
		"no release left")

	bareAfterHelm(t, helmHome, certDir)
	t.Logf("FIGURES: helm test %s (install, upgrade, test, uninstall, back to bare)",
		time.Since(began).Round(time.Second))
}

// caBundles returns the CA bundles the operator injected into the webhook
// configurations and the Drink CRD's conversion, failing g while any is
// empty.
func caBundles(g Gomega) map[string]string {
	bundles := map[string]string{}
	for _, wh := range webhookConfigurations {
		obj := wh.DeepCopyObject().(*unstructured.Unstructured)
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		webhooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		g.Expect(webhooks).NotTo(BeEmpty())
		for _, w := range webhooks {
			name, _, _ := unstructured.NestedString(w.(map[string]any), "name")
			ca, _, _ := unstructured.NestedString(w.(map[string]any), "clientConfig", "caBundle")
			g.Expect(ca).NotTo(BeEmpty(), "%s %s caBundle", obj.GetKind(), name)
			bundles[obj.GetKind()+"/"+name] = ca
		}
	}
	ca, _, _ := unstructured.NestedString(customResourceDefinition(g, "drinks.example.com").Object,
		"spec", "conversion", "webhook", "clientConfig", "caBundle")
	g.Expect(base64.StdEncoding.DecodeString(ca)).NotTo(BeEmpty(), "the Drink CRD's conversion caBundle")
	bundles["drinks.example.com"] = ca
	return bundles
}

// bareAfterHelm takes the cluster back to bare after the Helm test, whatever
// its outcome: no operator, no release, no CRD (which crds.keep left), no
// release namespace, no certificate of the chart's operator.
func bareAfterHelm(t *testing.T, helmHome, certDir string) {
	t.Helper()
	stopOperator()
	if out, err := helmCmd(helmHome, "uninstall", helmRelease, "-n", helmNamespace, "--ignore-not-found",
		"--wait", "--timeout=60s"); err != nil {
		t.Errorf("helm uninstall: %v\n%s", err, out)
	}
	args := append([]string{"delete", "crd", "--ignore-not-found", "--wait", "--timeout=60s"}, chartCRDs...)
	if out, err := sh(t, nil, kubectl, args...); err != nil {
		t.Errorf("deleting the CRDs: %v\n%s", err, out)
	}
	if out, err := sh(t, nil, kubectl, "delete", "namespace", helmNamespace, "--ignore-not-found",
		"--wait", "--timeout=90s"); err != nil {
		t.Errorf("deleting namespace %s: %v\n%s", helmNamespace, err, out)
	}
	if err := os.RemoveAll(certDir); err != nil {
		t.Error(err)
	}
	NewWithT(t).Eventually(leftBehind).Should(BeEmpty(), "a bare cluster after the Helm test")
}

// helmCmd runs the helm binary against the suite's cluster ($KUBECONFIG)
// with its cache, configuration and data under home, and returns its
// combined output.
func helmCmd(home string, args ...string) (string, error) {
	cmd := exec.Command(helm, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustHelm is helmCmd that fails the test on error.
func mustHelm(t *testing.T, home string, args ...string) string {
	t.Helper()
	out, err := helmCmd(home, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
