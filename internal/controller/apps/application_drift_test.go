package apps

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// otherApply server-side applies obj (unstructured YAML-like map) as the
// field manager "other-tool", taking over what it names, as another
// controller or `kubectl apply --server-side --force-conflicts` would.
func otherApply(g Gomega, obj map[string]any) {
	u := &unstructured.Unstructured{Object: obj}
	g.Expect(k8sClient.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner("other-tool"), client.ForceOwnership)).To(Succeed())
}

// patchAs patches obj with a patch of type pt as the field manager
// "kubectl-patch" (an Update: the manager owns what it changed).
func patchAs(g Gomega, obj client.Object, pt types.PatchType, patch string) {
	g.Expect(k8sClient.Patch(context.Background(), obj, client.RawPatch(pt, []byte(patch)),
		client.FieldOwner("kubectl-patch"))).To(Succeed())
}

// Every field or list entry inside a child's spec that another field
// manager changed or added is put back, whoever did it (an Update such as
// kubectl patch, or another manager's server-side apply), atomic maps
// included; what the operator does not set (other tools' labels and
// annotations, kubectl rollout restart's annotation, server-assigned
// fields) stays. After the restores, a reconcile makes no write.
func TestChangesByOtherFieldManagersAreRestored(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	app := createSeedSample(t, g)
	ns := app.Namespace
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
	want := getDeployment(g, app).Spec.DeepCopy()
	wantSvc := getService(g, app)
	clusterIP := wantSvc.Spec.ClusterIP

	t.Run("Service selector widened by kubectl patch (an atomic map)", func(t *testing.T) {
		g := testutil.NewG(t)
		patchAs(g, getService(g, app), types.MergePatchType, `{"spec":{"selector":{"hijack":"yes"}}}`)
		g.Eventually(func(g Gomega) {
			g.Expect(getService(g, app).Spec.Selector).To(Equal(wantSvc.Spec.Selector))
		}).Should(Succeed())
	})
	t.Run("env var added by kubectl patch", func(t *testing.T) {
		g := testutil.NewG(t)
		patchAs(g, getDeployment(g, app), types.JSONPatchType,
			`[{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"INJECTED","value":"1"}]}]`)
		g.Eventually(func(g Gomega) {
			g.Expect(getDeployment(g, app).Spec.Template.Spec.Containers[0].Env).To(BeEmpty())
		}).Should(Succeed())
	})
	t.Run("sidecar, volume and toleration added by another manager's apply", func(t *testing.T) {
		g := testutil.NewG(t)
		otherApply(g, map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": app.Name, "namespace": ns},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers":  []any{map[string]any{"name": "sidecar", "image": "busybox"}},
				"volumes":     []any{map[string]any{"name": "scratch", "emptyDir": map[string]any{}}},
				"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Exists"}},
			}}},
		})
		g.Eventually(func(g Gomega) {
			spec := getDeployment(g, app).Spec.Template.Spec
			g.Expect(spec.Containers).To(HaveLen(1))
			g.Expect(spec.Volumes).To(BeEmpty())
			g.Expect(spec.Tolerations).To(BeEmpty())
		}).Should(Succeed())
	})
	t.Run("image and replicas changed by another manager's apply", func(t *testing.T) {
		g := testutil.NewG(t)
		otherApply(g, map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": app.Name, "namespace": ns},
			"spec": map[string]any{"replicas": int64(4), "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "nginx", "image": "evil:latest"}},
			}}},
		})
		g.Eventually(func(g Gomega) {
			d := getDeployment(g, app)
			g.Expect(*d.Spec.Replicas).To(Equal(*want.Replicas))
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.14.2"))
		}).Should(Succeed())
	})
	t.Run("Service fields the Application leaves to defaults set by another manager's apply", func(t *testing.T) {
		g := testutil.NewG(t)
		otherApply(g, map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": app.Name, "namespace": ns},
			"spec":     map[string]any{"sessionAffinity": "ClientIP", "externalTrafficPolicy": "Local"},
		})
		g.Eventually(func(g Gomega) {
			spec := getService(g, app).Spec
			g.Expect(spec.SessionAffinity).To(Equal(wantSvc.Spec.SessionAffinity))
			g.Expect(spec.ExternalTrafficPolicy).To(Equal(wantSvc.Spec.ExternalTrafficPolicy))
		}).Should(Succeed())
	})

	// What the operator does not set stays: other tools' metadata, the
	// restart annotation, server-assigned fields.
	patchAs(g, getDeployment(g, app), types.MergePatchType, `{"metadata":{"labels":{"team":"blue"},"annotations":{"tool/seen":"yes"}},`+
		`"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-11-30T00:00:00Z"}}}}}`)
	patchAs(g, getService(g, app), types.MergePatchType, `{"metadata":{"labels":{"team":"blue"}}}`)
	mine := writes.In(testutil.InNamespace(ns))
	g.Eventually(mine.Drain).WithPolling(time.Second).Should(BeZero(), "the manager settles")
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, app)).To(Succeed())
	suite.ExpectQuiet(g, mine, mark, applicationController, client.ObjectKeyFromObject(app))

	d := getDeployment(g, app)
	g.Expect(d.Labels).To(HaveKeyWithValue("team", "blue"))
	g.Expect(d.Annotations).To(HaveKeyWithValue("tool/seen", "yes"))
	g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("kubectl.kubernetes.io/restartedAt", "2026-11-30T00:00:00Z"))
	delete(d.Spec.Template.Annotations, "kubectl.kubernetes.io/restartedAt")
	if len(d.Spec.Template.Annotations) == 0 {
		d.Spec.Template.Annotations = nil
	}
	g.Expect(d.Spec).To(Equal(*want), "the Deployment's spec is the operator's again")
	svc := getService(g, app)
	g.Expect(svc.Labels).To(HaveKeyWithValue("team", "blue"))
	g.Expect(svc.Spec.ClusterIP).To(Equal(clusterIP))
	g.Expect(svc.Spec.Ports).To(Equal(wantSvc.Spec.Ports), "nodePorts assigned by the server kept")
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
}

// A write the API server refuses for a reason other than an invalid object
// (here a ValidatingAdmissionPolicy denying image changes, as a policy
// engine's webhook would with a 403) keeps the live Deployment in the
// status: its workflow (and so the scale subresource) is not zeroed, and
// Ready says why the change was refused.
func TestRefusedApplyKeepsTheLiveChildInTheStatus(t *testing.T) {
	g := testutil.NewG(t)
	ctx := context.Background()
	app := createSeedSample(t, g)
	markDeploymentAvailable(g, app)
	g.Eventually(func(g Gomega) {
		g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(getApp(g, app).Status.Workflow.AvailableReplicas).To(Equal(int32(1)))
	}).Should(Succeed())

	denyImageChanges(t, g, app.Namespace)
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		got.Spec.Deployment.Template.Spec.Containers[0].Image = "nginx:1.27"
		g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := getApp(g, app)
		c := readyCond(g, app)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(sunappsv1.ReasonApplyFailed))
		g.Expect(c.Message).To(ContainSubstring("The API server refused the Deployment"))
		g.Expect(c.Message).To(ContainSubstring("images are frozen"))
		g.Expect(got.Status.Workflow.AvailableReplicas).To(Equal(int32(1)), "the live Deployment is still described")
		g.Expect(got.Status.Workflow.Replicas).To(Equal(int32(1)))
	}).Should(Succeed())
	g.Expect(getDeployment(g, app).Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.14.2"))
}

// denyImageChanges makes the API server refuse, in namespace ns, any
// update of a Deployment that changes a container image, with a 403.
func denyImageChanges(t *testing.T, g Gomega, ns string) {
	ctx := context.Background()
	denyWrites(t, g, "freeze-images-"+ns, ns, admissionregistrationv1.Update,
		admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
		"object.spec.template.spec.containers.map(c, c.image) == oldObject.spec.template.spec.containers.map(c, c.image)",
		"images are frozen", func() error {
			// The policy is in force once a dry-run image change is refused.
			list := &appsv1.DeploymentList{}
			if err := k8sClient.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) == 0 {
				return fmt.Errorf("no Deployment to probe with: %v", err)
			}
			probe := list.Items[0].DeepCopy()
			probe.Spec.Template.Spec.Containers[0].Image = "probe:1"
			return k8sClient.Update(ctx, probe, client.DryRunAll)
		})
}

// denyWrites makes the API server refuse (Forbidden, with message) the
// operation op of rule's resources in namespace ns that expression does
// not allow, with a ValidatingAdmissionPolicy and its binding named name,
// and waits until probe, a dry run of such a write, is refused. The
// returned function lifts the refusal and waits until probe is accepted;
// the end of the test lifts it too.
func denyWrites(t *testing.T, g Gomega, name, ns string, op admissionregistrationv1.OperationType,
	rule admissionregistrationv1.Rule, expression, message string, probe func() error) (lift func()) {
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{op}, Rule: rule},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: expression, Message: message, Reason: new(metav1.StatusReasonForbidden)}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
			}},
		},
	}
	g.Expect(k8sClient.Create(ctx, policy)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, binding)).To(Succeed())
	remove := func() {
		_ = k8sClient.Delete(ctx, binding)
		_ = k8sClient.Delete(ctx, policy)
	}
	t.Cleanup(remove)
	g.Eventually(func(g Gomega) {
		err := probe()
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "policy not in force yet: %v", err)
		g.Expect(err.Error()).To(ContainSubstring(message))
	}).Should(Succeed())
	return func() {
		remove()
		g.Eventually(probe).Should(Succeed())
	}
}
