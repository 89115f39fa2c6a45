package apps

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/testutil"
	"sunstrider.cn/operator/internal/testutil/seedcontroller"
)

// The shipped write policy's name and messages
// (config/rbac/manager_write_policy.yaml), one per rule.
const (
	writePolicy          = "sunstrider-operator-manager-writes"
	policyCreate         = "the operator may create an object only with the label"
	policyUpdateOwned    = "the operator may update only an object it made"
	policyKeepMarks      = "the operator may not remove the label"
	policyDeleteOwned    = "the operator may delete only an object it made"
	policyWebhookCABound = "the operator may change only the webhooks' clientConfig.caBundle"
	policyCRDCABound     = "the operator may change only spec.conversion.webhook.clientConfig.caBundle"
)

func init() { utilruntime.Must(apiextv1.AddToScheme(scheme)) }

// installWritePolicy installs the shipped write policy, the manager's
// ClusterRoles and their bindings (removed when the test ends) and returns
// the config of a client impersonating the manager's ServiceAccount and
// that client, once the policy refuses a probe.
func installWritePolicy(t *testing.T, g *WithT) (*rest.Config, client.Client) {
	t.Helper()
	ctx := context.Background()
	shipped := testutil.RenderShipped(t)
	kindNames := [][2]string{
		{"ClusterRole", "sunstrider-operator-manager-role"},
		{"ClusterRoleBinding", "sunstrider-operator-manager-rolebinding"},
		{"ClusterRole", "sunstrider-operator-ca-injection-role"},
		{"ClusterRoleBinding", "sunstrider-operator-ca-injection-rolebinding"},
		{"ValidatingAdmissionPolicy", writePolicy},
		{"ValidatingAdmissionPolicyBinding", writePolicy},
	}
	objects := make([]*unstructured.Unstructured, 0, len(kindNames))
	for _, kindName := range kindNames {
		objects = append(objects, shipped.Get(t, kindName[0], kindName[1]))
	}
	// The policy names the ServiceAccount the install creates
	// (config/default's replacements).
	conditions, _, _ := unstructured.NestedSlice(objects[4].Object, "spec", "matchConditions")
	g.Expect(conditions).To(HaveLen(1))
	g.Expect(conditions[0]).To(HaveKeyWithValue("expression", shipped.PolicyUsernameExpression()))
	for _, obj := range objects {
		g.Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
	}
	t.Cleanup(func() {
		for _, obj := range objects {
			_ = k8sClient.Delete(ctx, obj)
		}
	})

	cfg := rest.CopyConfig(suite.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: shipped.Username()}
	operator, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	// RBAC and policies load asynchronously: wait until a ConfigMap
	// creation gets past RBAC and is refused by the policy.
	ns := testutil.Namespace(t, k8sClient)
	g.Eventually(func(g Gomega) {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "write-policy-probe"}}
		g.Expect(operator.Create(ctx, probe, client.DryRunAll)).To(MatchError(ContainSubstring(policyCreate)))
	}).Should(Succeed())
	return cfg, operator
}

// controllerOf returns a controller owner reference to app.
func controllerOf(app *sunappsv1.Application) metav1.OwnerReference {
	return *metav1.NewControllerRef(app, sunappsv1.GroupVersion.WithKind("Application"))
}

// TestShippedWritePolicyConfinesTheOperatorsWrites: RBAC lets the manager's
// ServiceAccount create, patch and delete children in every namespace and
// update its webhook configurations and the Drink CRD whole; the shipped
// policy lets through only the writes of objects it made (its label and a
// controller owner reference to one of its kinds) and of the caBundle.
func TestShippedWritePolicyConfinesTheOperatorsWrites(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, operator := installWritePolicy(t, g)
	ns := testutil.Namespace(t, k8sClient)
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "policy-owner", UID: "00000000-0000-0000-0000-0000000000a1"}}
	managed := map[string]string{apply.ManagedByLabel: apply.ManagedByValue}
	configMap := func(name string, labels map[string]string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels,
			OwnerReferences: owners}, Data: map[string]string{"k": "v"}}
	}
	notController := controllerOf(app)
	notController.Controller = nil
	deployment := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d",
		UID: "00000000-0000-0000-0000-0000000000d1", Controller: new(true)}

	t.Run("create", func(t *testing.T) {
		g := NewWithT(t)
		for _, cm := range []*corev1.ConfigMap{
			configMap("no-marks", nil),
			configMap("label-only", managed),
			configMap("owner-only", nil, controllerOf(app)),
			configMap("not-controller", managed, notController),
			configMap("other-kind", managed, deployment),
		} {
			err := operator.Create(ctx, cm)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", cm.Name, err)
			g.Expect(err).To(MatchError(ContainSubstring(policyCreate)), cm.Name)
			g.Expect(err).To(MatchError(ContainSubstring(writePolicy)), cm.Name)
		}
		g.Expect(operator.Create(ctx, configMap("ours", managed, controllerOf(app)))).To(Succeed())
	})

	t.Run("update", func(t *testing.T) {
		g := NewWithT(t)
		foreign := configMap("foreign", nil)
		stripped := configMap("stripped", managed) // its owner reference removed
		seed := configMap("seed", nil, controllerOf(app))
		owned := configMap("owned", managed, controllerOf(app))
		for _, cm := range []*corev1.ConfigMap{foreign, stripped, seed, owned} {
			g.Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		}
		patch := func(cm *corev1.ConfigMap, p string) error {
			target := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cm.Name}}
			return operator.Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(p)))
		}
		for _, cm := range []*corev1.ConfigMap{foreign} {
			for _, p := range []string{`{"data":{"k":"changed"}}`,
				`{"metadata":{"ownerReferences":[{"apiVersion":"apps.sunstrider.cn/v1","kind":"Application","name":"policy-owner","uid":"00000000-0000-0000-0000-0000000000a1","controller":true}]}}`} {
				err := patch(cm, p)
				g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s %s: %v", cm.Name, p, err)
				g.Expect(err).To(MatchError(ContainSubstring(policyUpdateOwned)), "%s %s", cm.Name, p)
			}
		}
		// Its own: data changes pass; its marks stay.
		g.Expect(patch(owned, `{"data":{"k":"changed"}}`)).To(Succeed())
		for _, p := range []string{`{"metadata":{"labels":{"app.kubernetes.io/managed-by":null}}}`,
			`{"metadata":{"ownerReferences":null}}`} {
			err := patch(owned, p)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", p, err)
			g.Expect(err).To(MatchError(ContainSubstring(policyKeepMarks)), p)
		}
		// Its child stripped of its owner reference (label, no owner) is
		// re-adopted by putting the reference back; a change that leaves it
		// without is refused.
		err := patch(stripped, `{"data":{"k":"changed"}}`)
		g.Expect(err).To(MatchError(ContainSubstring(policyKeepMarks)))
		g.Expect(patch(stripped, `{"metadata":{"ownerReferences":[{"apiVersion":"apps.sunstrider.cn/v1","kind":"Application","name":"policy-owner","uid":"00000000-0000-0000-0000-0000000000a1","controller":true}]}}`)).
			To(Succeed())
		// A child of the seeds' design (owner, no label) is taken over by
		// adding the label; a change that leaves it unlabelled is not.
		err = patch(seed, `{"data":{"k":"changed"}}`)
		g.Expect(err).To(MatchError(ContainSubstring(policyKeepMarks)))
		g.Expect(patch(seed, `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"sunstrider-operator"}}}`)).To(Succeed())
	})

	t.Run("delete", func(t *testing.T) {
		g := NewWithT(t)
		service := func(name string, labels map[string]string, owners ...metav1.OwnerReference) *corev1.Service {
			s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, OwnerReferences: owners},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
			g.Expect(k8sClient.Create(ctx, s)).To(Succeed())
			return s
		}
		for _, s := range []*corev1.Service{
			service("foreign", nil),
			service("labelled-foreign", managed),
			service("seed", nil, controllerOf(app)),
		} {
			err := operator.Delete(ctx, s)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", s.Name, err)
			g.Expect(err).To(MatchError(ContainSubstring(policyDeleteOwned)), s.Name)
		}
		err := operator.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"}},
			client.DryRunAll)
		g.Expect(err).To(MatchError(ContainSubstring(policyDeleteOwned)), "the API server's own Service")
		g.Expect(operator.Delete(ctx, service("owned", managed, controllerOf(app)))).To(Succeed())
	})

	t.Run("webhook configuration", func(t *testing.T) {
		g := NewWithT(t)
		// The configuration the CA injection updates, as config/webhook
		// names it; it matches nothing (an object selector no object has).
		wh := &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "sunstrider-operator-validating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "vprobe.sunstrider.cn",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{
					Service:  &admissionregistrationv1.ServiceReference{Namespace: "sunstrider-operator-system", Name: "webhook"},
					CABundle: []byte("old"),
				},
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps.sunstrider.cn"}, APIVersions: []string{"v1"}, Resources: []string{"applications"}},
				}},
				ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"sunstrider.cn/write-policy-probe": "none"}},
				FailurePolicy:           new(admissionregistrationv1.Ignore),
				SideEffects:             new(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"},
			}},
		}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(wh), &admissionregistrationv1.ValidatingWebhookConfiguration{}); err == nil {
			t.Fatalf("the suite already has %s: this test would change it", wh.Name)
		}
		g.Expect(k8sClient.Create(ctx, wh)).To(Succeed())
		t.Cleanup(func() { _ = k8sClient.Delete(ctx, wh) })

		update := func(change func(*admissionregistrationv1.ValidatingWebhookConfiguration)) error {
			live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(wh), live)).To(Succeed())
			change(live)
			return operator.Update(ctx, live)
		}
		for what, change := range map[string]func(*admissionregistrationv1.ValidatingWebhookConfiguration){
			"rules": func(w *admissionregistrationv1.ValidatingWebhookConfiguration) {
				w.Webhooks[0].Rules[0].Resources = []string{"*"}
			},
			"url": func(w *admissionregistrationv1.ValidatingWebhookConfiguration) {
				w.Webhooks[0].ClientConfig.Service.Name = "elsewhere"
			},
			"selector": func(w *admissionregistrationv1.ValidatingWebhookConfiguration) { w.Webhooks[0].ObjectSelector = nil },
			"policy": func(w *admissionregistrationv1.ValidatingWebhookConfiguration) {
				w.Webhooks[0].FailurePolicy = new(admissionregistrationv1.Fail)
			},
			"label": func(w *admissionregistrationv1.ValidatingWebhookConfiguration) {
				w.Labels = map[string]string{"x": "y"}
			},
			"another webhook": func(w *admissionregistrationv1.ValidatingWebhookConfiguration) {
				extra := w.Webhooks[0]
				extra.Name = "vextra.sunstrider.cn"
				w.Webhooks = append(w.Webhooks, extra)
			},
		} {
			err := update(change)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", what, err)
			g.Expect(err).To(MatchError(ContainSubstring(policyWebhookCABound)), what)
		}
		g.Expect(update(func(w *admissionregistrationv1.ValidatingWebhookConfiguration) {
			w.Webhooks[0].ClientConfig.CABundle = []byte("new")
		})).To(Succeed(), "the CA injection")
	})

	t.Run("Drink CRD", func(t *testing.T) {
		g := NewWithT(t)
		key := client.ObjectKey{Name: "drinks.example.com"}
		original := &apiextv1.CustomResourceDefinition{}
		g.Expect(k8sClient.Get(ctx, key, original)).To(Succeed())
		// The conversion webhook config/crd's patch gives it (this suite
		// converts no Drink), restored when the test ends.
		live := original.DeepCopy()
		live.Spec.Conversion = &apiextv1.CustomResourceConversion{
			Strategy: apiextv1.WebhookConverter,
			Webhook: &apiextv1.WebhookConversion{
				ClientConfig: &apiextv1.WebhookClientConfig{
					Service:  &apiextv1.ServiceReference{Namespace: "sunstrider-operator-system", Name: "webhook", Path: new("/convert")},
					CABundle: selfSignedPEM(g),
				},
				ConversionReviewVersions: []string{"v1"},
			},
		}
		g.Expect(k8sClient.Update(ctx, live)).To(Succeed())
		t.Cleanup(func() {
			g := NewWithT(t)
			g.Eventually(func(g Gomega) {
				restored := &apiextv1.CustomResourceDefinition{}
				g.Expect(k8sClient.Get(ctx, key, restored)).To(Succeed())
				restored.Spec.Conversion = original.Spec.Conversion
				g.Expect(k8sClient.Update(ctx, restored)).To(Succeed())
			}).Should(Succeed())
		})
		update := func(change func(*apiextv1.CustomResourceDefinition)) error {
			live := &apiextv1.CustomResourceDefinition{}
			g.Expect(k8sClient.Get(ctx, key, live)).To(Succeed())
			change(live)
			return operator.Update(ctx, live)
		}
		for what, change := range map[string]func(*apiextv1.CustomResourceDefinition){
			"service": func(c *apiextv1.CustomResourceDefinition) {
				c.Spec.Conversion.Webhook.ClientConfig.Service.Name = "elsewhere"
			},
			"short names": func(c *apiextv1.CustomResourceDefinition) {
				c.Spec.Names.ShortNames = append(c.Spec.Names.ShortNames, "drk")
			},
			"annotation": func(c *apiextv1.CustomResourceDefinition) {
				c.Annotations = map[string]string{"x": "y"}
			},
		} {
			err := update(change)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", what, err)
			g.Expect(err).To(MatchError(ContainSubstring(policyCRDCABound)), what)
		}
		g.Expect(update(func(c *apiextv1.CustomResourceDefinition) {
			c.Spec.Conversion.Webhook.ClientConfig.CABundle = selfSignedPEM(g)
		})).To(Succeed(), "the CA injection")
	})

	// The policy is about the operator only: an administrator's write
	// passes.
	g.Expect(k8sClient.Create(ctx, configMap("admin", nil))).To(Succeed())
}

// selfSignedPEM returns a new self-signed certificate, PEM-encoded: the
// API server checks a CRD's caBundle parses.
func selfSignedPEM(g *WithT) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	g.Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestApplicationConvergesAsItsServiceAccountUnderTheWritePolicy runs the
// manager as its ServiceAccount, with its ClusterRoles and the shipped
// write policy: it still takes over the seeds' children (owner reference,
// no label), makes every child of an Application, records a revision and
// deletes the Service whose ports are removed.
func TestApplicationConvergesAsItsServiceAccountUnderTheWritePolicy(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cfg, _ := installWritePolicy(t, g)
	ns := testutil.Namespace(t, k8sClient)

	// The seed's operator makes its children first.
	stopManager()
	t.Cleanup(func() {
		stopManager()
		if err := startManager(); err != nil {
			t.Errorf("restarting the manager as administrator: %v", err)
		}
	})
	seeded := seedSample(ns)
	g.Expect(k8sClient.Create(ctx, seeded)).To(Succeed())
	seed := &seedcontroller.Reconciler{Client: client.WithFieldOwner(k8sClient, "seed-manager"), Scheme: scheme}
	_, err := seed.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(seeded)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(getDeployment(g, seeded).Labels).NotTo(HaveKey(apply.ManagedByLabel), "made by the seed's design")

	admin := suite.Config
	suite.Config = cfg
	err = startManager()
	suite.Config = admin
	g.Expect(err).NotTo(HaveOccurred())

	full := seedSample(ns)
	full.Name = "policy-full"
	full.Labels = map[string]string{"app": "policy-full"}
	full.Spec.Deployment.Selector.MatchLabels = full.Labels
	full.Spec.Deployment.Replicas = nil
	full.Spec.DisruptionBudget = &sunappsv1.DisruptionBudget{MinAvailable: new(intstr.FromInt32(1))}
	full.Spec.Autoscaling = &sunappsv1.Autoscaling{MinReplicas: ptr.To[int32](1), MaxReplicas: 3}
	g.Expect(k8sClient.Create(ctx, full)).To(Succeed())

	for _, app := range []*sunappsv1.Application{seeded, full} {
		g.Eventually(func(g Gomega) {
			g.Expect(getDeployment(g, app).Labels).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue))
			g.Expect(getService(g, app).Labels).To(HaveKeyWithValue(apply.ManagedByLabel, apply.ManagedByValue))
		}).Should(Succeed(), "%s's children are the operator's", app.Name)
		markDeploymentAvailable(g, app)
		g.Eventually(func(g Gomega) {
			g.Expect(readyCond(g, app).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed(), "%s is Ready", app.Name)
	}
	g.Eventually(func(g Gomega) {
		getBudget(g, full)
		getAutoscaler(g, full)
	}).Should(Succeed(), "the budget and the autoscaler are made")

	// A new template: a revision is recorded (ControllerRevisions from the
	// first change on).
	setImage(g, full, "nginx:1.27")
	g.Eventually(func(g Gomega) {
		g.Expect(appRevisions(g, full)).NotTo(BeEmpty())
	}).Should(Succeed(), "a revision is recorded")

	// No ports: the operator deletes the Service it made.
	g.Eventually(func(g Gomega) {
		live := getApp(g, full)
		live.Spec.Service.Ports = nil
		live.Spec.Service.Type = ""
		g.Expect(k8sClient.Update(ctx, live)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(full), &corev1.Service{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Service is gone: %v", err)
	}).Should(Succeed())
}
