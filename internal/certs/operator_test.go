package certs_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/certs"
	"sunstrider.cn/operator/internal/testutil"
)

// The objects as config/default names them: the tests install its RBAC,
// write policy, Secrets and ConfigMap, and run the manager as its
// ServiceAccount.
const (
	namespace       = "sunstrider-operator-system"
	secretName      = "sunstrider-operator-webhook-server-cert"
	caSecretName    = "sunstrider-operator-webhook-ca"
	caConfigMapName = "sunstrider-operator-webhook-ca-bundle"
	mutatingName    = "sunstrider-operator-mutating-webhook-configuration"
	validatingName  = "sunstrider-operator-validating-webhook-configuration"
	drinkCRD        = "drinks.example.com"
)

// selfOptions are the options cmd/main.go passes with --cert-mode=self.
func selfOptions(certDir string) certs.Options {
	return certs.Options{
		Namespace:                      namespace,
		SecretName:                     secretName,
		CASecretName:                   caSecretName,
		CAConfigMapName:                caConfigMapName,
		ServiceName:                    "webhook-service",
		ExtraDNSNames:                  []string{"localhost"},
		CertDir:                        certDir,
		MutatingWebhookConfiguration:   mutatingName,
		ValidatingWebhookConfiguration: validatingName,
		ConversionCRDs:                 []string{drinkCRD},
	}
}

// policyCreate begins the write policy's refusal of a child without its
// marks (config/rbac/manager_write_policy.yaml).
const policyCreate = "the operator may create an object only with the label"

// installShipped creates the operator's namespace and what config/default
// installs for --cert-mode=self besides the workload: the manager's Roles
// and ClusterRoles with their bindings, its write policy, the empty
// certificate Secrets and the CA ConfigMap. It returns a config
// impersonating the manager's ServiceAccount, once RBAC and the policy
// apply to it.
func (c *cluster) installShipped(t *testing.T) *rest.Config {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	shipped := testutil.RenderShipped(t)
	g.Expect(shipped.Namespace).To(Equal(namespace))
	g.Expect(c.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	for _, kindName := range [][2]string{
		{"Role", "sunstrider-operator-manager-role"},
		{"RoleBinding", "sunstrider-operator-manager-rolebinding"},
		{"ClusterRole", "sunstrider-operator-manager-role"},
		{"ClusterRoleBinding", "sunstrider-operator-manager-rolebinding"},
		{"ClusterRole", "sunstrider-operator-ca-injection-role"},
		{"ClusterRoleBinding", "sunstrider-operator-ca-injection-rolebinding"},
		{"ValidatingAdmissionPolicy", "sunstrider-operator-manager-writes"},
		{"ValidatingAdmissionPolicyBinding", "sunstrider-operator-manager-writes"},
		{"Secret", secretName},
		{"Secret", caSecretName},
		{"ConfigMap", caConfigMapName},
	} {
		obj := shipped.Get(t, kindName[0], kindName[1])
		g.Expect(c.client.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
	}
	cfg := rest.CopyConfig(c.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: shipped.Username()}
	operator, err := client.New(cfg, client.Options{Scheme: c.scheme})
	g.Expect(err).NotTo(HaveOccurred())
	// RBAC and policies load asynchronously: wait until the Role lets the
	// serving Secret be read and the policy refuses a ConfigMap.
	g.Eventually(func(g Gomega) {
		g.Expect(operator.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, &corev1.Secret{})).To(Succeed())
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "write-policy-probe"}}
		g.Expect(operator.Create(ctx, probe, client.DryRunAll)).To(MatchError(ContainSubstring(policyCreate)))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	// The Role names the two Secrets and no other.
	err = operator.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "other"}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "creating a Secret: %v", err)
	g.Expect(c.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "other"}})).To(Succeed())
	err = operator.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "other"}, &corev1.Secret{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "reading another Secret: %v", err)
	err = operator.List(ctx, &corev1.SecretList{}, client.InNamespace(namespace))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing the namespace's Secrets: %v", err)
	// It may write the CA ConfigMap (below), not delete it.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: caConfigMapName}}
	err = operator.Delete(ctx, cm, client.DryRunAll)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "deleting the CA ConfigMap: %v", err)
	return cfg
}

// expectSeparateKeys checks the Secrets and the ConfigMap as the leader
// keeps them: the CA and its key in the CA Secret only; the serving
// Secret with its certificate, key and ca.crt and no CA key; ca.crt in the
// ConfigMap and in every caBundle. It returns the CA.
func expectSeparateKeys(g Gomega, c client.Client) []byte {
	ctx := context.Background()
	caSecret, serving := &corev1.Secret{}, &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: caSecretName}, caSecret)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, serving)).To(Succeed())
	g.Expect(caSecret.Data).To(HaveLen(2))
	ca := caSecret.Data["ca.crt"]
	g.Expect(ca).NotTo(BeEmpty())
	g.Expect(caSecret.Data["ca.key"]).NotTo(BeEmpty())
	g.Expect(serving.Data).To(And(HaveLen(3), HaveKey("tls.crt"), HaveKey("tls.key"), HaveKeyWithValue("ca.crt", ca)),
		"the serving Secret holds no CA key")

	cm := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: caConfigMapName}, cm)).To(Succeed())
	g.Expect(cm.Data).To(Equal(map[string]string{"ca.crt": string(ca)}))
	g.Expect(caBundles(g, c)).To(HaveEach(Equal(ca)))
	return ca
}

// eventuallySeparateKeys waits until expectSeparateKeys holds (the leader
// publishes the CA in the ConfigMap just after it injected it, which makes
// it ready) and returns the CA.
func eventuallySeparateKeys(g Gomega, c client.Client) []byte {
	var ca []byte
	g.Eventually(func(g Gomega) { ca = expectSeparateKeys(g, c) }, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	return ca
}

// caBundles are the caBundles of the webhook configurations' webhooks and
// of the Drink CRD's conversion webhook.
func caBundles(g Gomega, c client.Client) [][]byte {
	ctx := context.Background()
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: mutatingName}, mutating)).To(Succeed())
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: validatingName}, validating)).To(Succeed())
	out := make([][]byte, 0, len(mutating.Webhooks)+len(validating.Webhooks)+1)
	for _, h := range mutating.Webhooks {
		out = append(out, h.ClientConfig.CABundle)
	}
	for _, h := range validating.Webhooks {
		out = append(out, h.ClientConfig.CABundle)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: drinkCRD}, crd)).To(Succeed())
	g.Expect(crd.Spec.Conversion.Webhook).NotTo(BeNil())
	out = append(out, crd.Spec.Conversion.Webhook.ClientConfig.CABundle)
	g.Expect(out).To(HaveLen(len(mutating.Webhooks) + len(validating.Webhooks) + 1))
	return out
}

// legacyCertificates are a CA and a serving certificate for dnsNames as
// the operator's versions before the CA had a Secret of its own made them
// (github.com/open-policy-agent/cert-controller v0.16): RSA 2048 keys in
// PKCS#1, the CA valid 10 years, the certificate a year.
func legacyCertificates(t *testing.T, dnsNames []string) (caCert, caKey, cert, key []byte) {
	t.Helper()
	g := NewWithT(t)
	now := time.Now()
	encode := func(der []byte, k *rsa.PrivateKey) ([]byte, []byte) {
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	}
	rootKey, err := rsa.GenerateKey(rand.Reader, 2048)
	g.Expect(err).NotTo(HaveOccurred())
	root := &x509.Certificate{
		SerialNumber:          big.NewInt(0),
		Subject:               pkix.Name{CommonName: "sunstrider-operator-ca", Organization: []string{"sunstrider-operator"}},
		DNSNames:              []string{"sunstrider-operator-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, root, root, rootKey.Public(), rootKey)
	g.Expect(err).NotTo(HaveOccurred())
	caCert, caKey = encode(der, rootKey)
	root, err = x509.ParseCertificate(der)
	g.Expect(err).NotTo(HaveOccurred())
	leafKey, err := rsa.GenerateKey(rand.Reader, 2048)
	g.Expect(err).NotTo(HaveOccurred())
	leaf := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: dnsNames[0]},
		DNSNames:              dnsNames,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err = x509.CreateCertificate(rand.Reader, leaf, root, leafKey.Public(), rootKey)
	g.Expect(err).NotTo(HaveOccurred())
	cert, key = encode(der, leafKey)
	return caCert, caKey, cert, key
}
