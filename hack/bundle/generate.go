package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// inputs is everything the bundle is made of.
type inputs struct {
	Manifests []byte // kustomize build config/default
	Samples   []byte // kustomize build config/samples
	Base      []byte // hack/bundle/csv.base.yaml
	Icon      []byte // SVG

	Version        string
	Replaces       string
	Image          string
	Package        string
	Channels       string
	DefaultChannel string
}

const (
	// webhookCertDir is where OLM mounts the serving certificate it
	// provisions for a CSV's webhooks (tls.crt, tls.key): the manager's
	// default --webhook-cert-path.
	webhookCertDir = "/tmp/k8s-webhook-server/serving-certs"
	// webhookServicePort is the port of the Service OLM creates in front of
	// the webhook server; the API server calls it there.
	webhookServicePort = 443
	// webhookContainerPortName names the manager's webhook server port
	// (config/manager/manager.yaml).
	webhookContainerPortName = "webhook-server"
	// selfManagedCertSecret and selfManagedCASecret are the empty Secrets
	// config/default ships for --cert-mode=self; under OLM the certificate
	// is OLM's.
	selfManagedCertSecret = "sunstrider-operator-webhook-server-cert"
	selfManagedCASecret   = "sunstrider-operator-webhook-ca"
	// caBundleConfigMap is the ConfigMap where the manager publishes the
	// ca.crt of its certificate directory; OLM mounts none there, so the
	// bundle leaves it out.
	caBundleConfigMap = "sunstrider-operator-webhook-ca-bundle"
	managedByLabel    = "app.kubernetes.io/managed-by"

	// podPolicy and writePolicy are the ValidatingAdmissionPolicies (and
	// their bindings) confining the manager's Pod patches and its other
	// writes, which the bundle leaves out.
	podPolicy   = "sunstrider-operator-manager-pod-writes"
	writePolicy = "sunstrider-operator-manager-writes"
	// caInjectionRole is the ClusterRole (and binding, its name +
	// "binding") of the manager's CA injection: OLM injects the CA, so the
	// bundle leaves it out.
	caInjectionRole = "sunstrider-operator-ca-injection-role"

	kindRole        = "Role"
	kindClusterRole = "ClusterRole"
)

// bundleObjectKinds are the kinds OLM installs from a bundle beside the CSV
// and the CRDs (operator-registry's supported kinds that config/ can hold).
var bundleObjectKinds = []string{
	kindClusterRole, "ConfigMap", "PodDisruptionBudget", "PriorityClass", "PrometheusRule", kindRole,
	"Service", "ServiceMonitor",
}

// selfCertResources are what the manager's permissions that exist only for
// --cert-mode=self are on, by API group (internal/certs: the certificate
// Secret, CA injection into the webhook configurations and the Drink CRD).
// Under OLM the manager runs with --cert-mode=external and OLM does all of
// it, so the CSV does not grant them: in particular the operator never gets
// write access to CRDs.
var selfCertResources = map[string][]string{
	"":                             {"secrets"},
	"admissionregistration.k8s.io": {"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
	"apiextensions.k8s.io":         {"customresourcedefinitions"},
}

// certVerbs are internal/certs' verbs on what it reads and updates.
var certVerbs = []string{"get", "list", "watch", "update"}

// isSelfCertRule reports whether rule grants only certVerbs on
// selfCertResources (with or without resourceNames: config/rbac narrows
// update to the operator's own objects). A rule that also grants anything
// else is kept, and the bundle's tests refuse it.
func isSelfCertRule(rule rbacv1.PolicyRule) bool {
	if len(rule.NonResourceURLs) > 0 || len(rule.APIGroups) == 0 || len(rule.Resources) == 0 {
		return false
	}
	for _, group := range rule.APIGroups {
		for _, res := range rule.Resources {
			if !slices.Contains(selfCertResources[group], res) {
				return false
			}
		}
	}
	for _, verb := range rule.Verbs {
		if !slices.Contains(certVerbs, verb) {
			return false
		}
	}
	return true
}

// generate returns the bundle's files by path relative to the repository root.
func generate(in *inputs) (map[string][]byte, error) {
	ver, err := semver.Parse(in.Version)
	if err != nil {
		return nil, fmt.Errorf("-version %q: %w", in.Version, err)
	}
	objs, err := decodeAll(in.Manifests)
	if err != nil {
		return nil, fmt.Errorf("reading the kustomize output: %w", err)
	}
	samples, err := decodeAll(in.Samples)
	if err != nil {
		return nil, fmt.Errorf("reading the samples: %w", err)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(in.Base, csv); err != nil {
		return nil, fmt.Errorf("reading the base CSV: %w", err)
	}

	c, err := classify(objs)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}

	csv.Name = fmt.Sprintf("%s.v%s", in.Package, ver)
	csv.Spec.Version = version.OperatorVersion{Version: ver}
	if in.Replaces != "" {
		prev, err := semver.Parse(in.Replaces)
		if err != nil {
			return nil, fmt.Errorf("-replaces %q: %w", in.Replaces, err)
		}
		if !prev.LT(ver) {
			return nil, fmt.Errorf("-replaces %s is not older than -version %s", prev, ver)
		}
		csv.Spec.Replaces = fmt.Sprintf("%s.v%s", in.Package, prev)
		// Every release from the replaced one on may upgrade straight to this one.
		setAnnotation(&csv.ObjectMeta, "olm.skipRange", fmt.Sprintf(">=%s <%s", prev, ver))
	}
	setAnnotation(&csv.ObjectMeta, "containerImage", in.Image)
	csv.Spec.Icon = []v1alpha1.Icon{{Data: base64.StdEncoding.EncodeToString(in.Icon), MediaType: "image/svg+xml"}}
	// The base lists the operands' images (bundle_test.go checks them).
	csv.Spec.RelatedImages = append([]v1alpha1.RelatedImage{{Name: "manager", Image: in.Image}},
		csv.Spec.RelatedImages...)

	deployment, port, err := bundleDeployment(c.deployment, in.Image)
	if err != nil {
		return nil, err
	}
	strategy := v1alpha1.StrategyDetailsDeployment{DeploymentSpecs: []v1alpha1.StrategyDeploymentSpec{deployment}}
	strategy.Permissions, strategy.ClusterPermissions = c.permissions()
	csv.Spec.InstallStrategy = v1alpha1.NamedInstallStrategy{
		StrategyName: v1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy,
	}
	if csv.Spec.WebhookDefinitions, err = webhookDefinitions(c, deployment.Name, port); err != nil {
		return nil, err
	}
	if csv.Spec.CustomResourceDefinitions.Owned, err = ownedCRDs(csv.Spec.CustomResourceDefinitions.Owned,
		c.crds); err != nil {
		return nil, err
	}
	examples, err := almExamples(samples)
	if err != nil {
		return nil, err
	}
	setAnnotation(&csv.ObjectMeta, "alm-examples", examples)

	csvYAML, err := marshalCSV(csv)
	if err != nil {
		return nil, err
	}
	files["bundle/manifests/"+in.Package+".clusterserviceversion.yaml"] = csvYAML
	for _, crd := range c.crdObjects {
		data, err := marshalObject(crd)
		if err != nil {
			return nil, err
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		files["bundle/manifests/"+group+"_"+plural+".yaml"] = data
	}
	for _, obj := range c.extra {
		data, err := marshalObject(obj)
		if err != nil {
			return nil, err
		}
		gv := strings.ReplaceAll(obj.GetAPIVersion(), "/", "_")
		files["bundle/manifests/"+obj.GetName()+"_"+gv+"_"+strings.ToLower(obj.GetKind())+".yaml"] = data
	}

	annotations := bundleAnnotations(in)
	data, err := yaml.Marshal(map[string]any{"annotations": annotations})
	if err != nil {
		return nil, err
	}
	files["bundle/metadata/annotations.yaml"] = data
	files["bundle.Dockerfile"] = dockerfile(annotations)
	return files, nil
}

// classified is config/default sorted by what becomes of it in the bundle.
type classified struct {
	deployment  *appsv1.Deployment
	crds        []*apiextv1.CustomResourceDefinition
	crdObjects  []*unstructured.Unstructured
	roles       map[string][]rbacv1.PolicyRule // by kind/name
	namespaced  []string                       // Roles and ClusterRoles bound in the operator's namespace
	clusterWide []string                       // ClusterRoles bound cluster-wide
	webhooks    []*unstructured.Unstructured
	services    map[string]*unstructured.Unstructured
	extra       []*unstructured.Unstructured
}

// leftOut tells whether obj, of config/default, stays out of the bundle,
// and refuses what a bundle may not hold.
func leftOut(obj *unstructured.Unstructured) (bool, error) {
	switch obj.GetKind() {
	case "Namespace", "ServiceAccount":
		// OLM installs into a namespace the user (or the console) made and
		// creates the CSV's service accounts itself.
		return true, nil
	case kindClusterRole, "ClusterRoleBinding":
		// OLM injects the CA (the bundle runs --cert-mode=external): no
		// rights of the manager's CA injection.
		return obj.GetName() == caInjectionRole || obj.GetName() == caInjectionRole+"binding", nil
	case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
		if obj.GetName() != podPolicy && obj.GetName() != writePolicy {
			return false, fmt.Errorf("config/default has the %s %s, which an OLM bundle cannot hold", obj.GetKind(),
				obj.GetName())
		}
		// operator-registry installs no ValidatingAdmissionPolicy from a
		// bundle (pkg/lib/bundle/supported_resources.go), and OLM names
		// the manager's ServiceAccount itself: under OLM the manager's
		// writes are confined by RBAC only (docs/olm.md).
		return true, nil
	case "NetworkPolicy":
		// operator-registry installs no NetworkPolicy from a bundle
		// (pkg/lib/bundle/supported_resources.go) and OLM v1 refuses a
		// bundle holding one: under OLM the administrator applies
		// config/network-policy (docs/security.md, "Network policies").
		return true, nil
	case "Secret":
		if obj.GetName() != selfManagedCertSecret && obj.GetName() != selfManagedCASecret {
			return false, fmt.Errorf("config/default has the Secret %s: a bundle must not ship Secrets", obj.GetName())
		}
		return true, nil
	case "ConfigMap":
		return obj.GetName() == caBundleConfigMap, nil
	}
	return false, nil
}

func classify(objs []*unstructured.Unstructured) (*classified, error) {
	c := &classified{roles: map[string][]rbacv1.PolicyRule{}, services: map[string]*unstructured.Unstructured{}}
	var others []*unstructured.Unstructured
	var bindings []*unstructured.Unstructured
	for _, obj := range objs {
		if left, err := leftOut(obj); err != nil {
			return nil, err
		} else if left {
			continue
		}
		switch obj.GetKind() {
		case "Deployment":
			if c.deployment != nil {
				return nil, errors.New("config/default has more than one Deployment; the CSV installs one")
			}
			c.deployment = &appsv1.Deployment{}
			if err := fromUnstructured(obj, c.deployment); err != nil {
				return nil, err
			}
		case "CustomResourceDefinition":
			crd := &apiextv1.CustomResourceDefinition{}
			if err := fromUnstructured(obj, crd); err != nil {
				return nil, err
			}
			c.crds = append(c.crds, crd)
			c.crdObjects = append(c.crdObjects, obj)
		case kindRole, kindClusterRole:
			var role rbacv1.ClusterRole
			if err := fromUnstructured(obj, &role); err != nil {
				return nil, err
			}
			c.roles[obj.GetKind()+"/"+obj.GetName()] = role.Rules
			others = append(others, obj)
		case "RoleBinding", "ClusterRoleBinding":
			bindings = append(bindings, obj)
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			c.webhooks = append(c.webhooks, obj)
		case "Service":
			c.services[obj.GetName()] = obj
		default:
			others = append(others, obj)
		}
	}
	if c.deployment == nil {
		return nil, errors.New("config/default has no Deployment")
	}
	bound, err := c.bind(bindings)
	if err != nil {
		return nil, err
	}
	for _, obj := range others {
		kind := obj.GetKind()
		if (kind == kindRole || kind == kindClusterRole) && bound[kind+"/"+obj.GetName()] {
			continue // in the CSV's permissions
		}
		if !slices.Contains(bundleObjectKinds, kind) {
			return nil, fmt.Errorf("config/default has a %s (%s), which an OLM bundle cannot hold", kind, obj.GetName())
		}
		c.extra = append(c.extra, obj)
	}
	webhookServices := c.webhookServices()
	// The webhook Service is OLM's (<deployment>-service); other Services ship.
	for _, name := range slices.Sorted(maps.Keys(c.services)) {
		if !webhookServices[name] {
			c.extra = append(c.extra, c.services[name])
		}
	}
	slices.SortFunc(c.extra, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetKind()+"/"+a.GetName(), b.GetKind()+"/"+b.GetName())
	})
	slices.SortFunc(c.crdObjects, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetName(), b.GetName())
	})
	slices.SortFunc(c.crds, func(a, b *apiextv1.CustomResourceDefinition) int { return strings.Compare(a.Name, b.Name) })
	return c, nil
}

// bind sorts the Roles and ClusterRoles bound to the manager's ServiceAccount
// into namespaced and cluster-wide permissions and returns their kind/names.
func (c *classified) bind(bindings []*unstructured.Unstructured) (map[string]bool, error) {
	sa := c.deployment.Spec.Template.Spec.ServiceAccountName
	bound := map[string]bool{}
	for _, b := range bindings {
		var binding rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
		if err := fromUnstructured(b, &binding); err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(binding.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == sa
		}) {
			return nil, fmt.Errorf("%s %s binds subjects other than the manager's ServiceAccount %s", b.GetKind(),
				b.GetName(), sa)
		}
		key := binding.RoleRef.Kind + "/" + binding.RoleRef.Name
		if _, ok := c.roles[key]; !ok {
			return nil, fmt.Errorf("%s %s refers to %s, which config/default lacks", b.GetKind(), b.GetName(), key)
		}
		bound[key] = true
		if b.GetKind() == "RoleBinding" {
			c.namespaced = append(c.namespaced, key)
		} else {
			c.clusterWide = append(c.clusterWide, key)
		}
	}
	return bound, nil
}

// webhookServices names the Services the webhook configurations and the CRDs'
// conversion webhooks call.
func (c *classified) webhookServices() map[string]bool {
	webhookServices := map[string]bool{}
	for _, w := range c.webhooks {
		hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
		for _, h := range hooks {
			name, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "name")
			webhookServices[name] = true
		}
	}
	for _, crd := range c.crds {
		if conv := crd.Spec.Conversion; conv != nil && conv.Webhook != nil && conv.Webhook.ClientConfig != nil &&
			conv.Webhook.ClientConfig.Service != nil {
			webhookServices[conv.Webhook.ClientConfig.Service.Name] = true
		}
	}
	return webhookServices
}

// permissions returns the manager's namespaced and cluster-wide rules
// without those of --cert-mode=self.
func (c *classified) permissions() (namespaced, clusterWide []v1alpha1.StrategyDeploymentPermissions) {
	sa := c.deployment.Spec.Template.Spec.ServiceAccountName
	collect := func(keys []string) []v1alpha1.StrategyDeploymentPermissions {
		slices.Sort(keys)
		var rules []rbacv1.PolicyRule
		for _, key := range keys {
			for _, rule := range c.roles[key] {
				if !isSelfCertRule(rule) {
					rules = append(rules, rule)
				}
			}
		}
		if len(rules) == 0 {
			return nil
		}
		return []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: rules}}
	}
	return collect(c.namespaced), collect(c.clusterWide)
}

// bundleDeployment is config/default's Deployment as OLM runs it: with
// --cert-mode=external (OLM provisions and rotates the serving certificate,
// mounts it at webhookCertDir and injects its CA into the webhooks and the
// Drink CRD), without the emptyDir the manager writes its own certificate to
// in --cert-mode=self (OLM's Secret volume takes that path), and with the
// bundle's image. It also returns the webhook server's container port.
func bundleDeployment(d *appsv1.Deployment, image string) (v1alpha1.StrategyDeploymentSpec, int32, error) {
	d = d.DeepCopy()
	spec := &d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		return v1alpha1.StrategyDeploymentSpec{}, 0, fmt.Errorf("deployment %s has %d containers, want 1", d.Name,
			len(spec.Containers))
	}
	ctr := &spec.Containers[0]
	// Init containers running the manager's image (init-config) run the
	// bundle's too.
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Image == ctr.Image {
			spec.InitContainers[i].Image = image
		}
	}
	ctr.Image = image
	ctr.Args = slices.DeleteFunc(ctr.Args, func(a string) bool { return strings.HasPrefix(a, "--cert-mode=") })
	ctr.Args = append(ctr.Args, "--cert-mode=external")
	var certVolume string
	ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool {
		if m.MountPath == webhookCertDir {
			certVolume = m.Name
			return true
		}
		return false
	})
	if certVolume == "" {
		return v1alpha1.StrategyDeploymentSpec{}, 0, fmt.Errorf("deployment %s mounts nothing at %s", d.Name,
			webhookCertDir)
	}
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == certVolume })
	var port int32
	for _, p := range ctr.Ports {
		if p.Name == webhookContainerPortName {
			port = p.ContainerPort
		}
	}
	if port == 0 {
		return v1alpha1.StrategyDeploymentSpec{}, 0, fmt.Errorf("deployment %s has no port named %s", d.Name,
			webhookContainerPortName)
	}
	labels := d.Labels
	delete(labels, managedByLabel)
	return v1alpha1.StrategyDeploymentSpec{Name: d.Name, Spec: d.Spec, Label: labels}, port, nil
}

// webhookDefinitions turns config/default's webhook configurations and the
// CRDs' conversion webhooks into the CSV's webhookdefinitions. OLM creates
// the Service <deployment>-service (port webhookServicePort to targetPort)
// and the configurations, and sets the CA of each.
func webhookDefinitions(c *classified, deployment string, targetPort int32) ([]v1alpha1.WebhookDescription, error) {
	var defs []v1alpha1.WebhookDescription
	target := intstr.FromInt32(targetPort)
	for _, cfg := range c.webhooks {
		typ := v1alpha1.ValidatingAdmissionWebhook
		if cfg.GetKind() == "MutatingWebhookConfiguration" {
			typ = v1alpha1.MutatingAdmissionWebhook
		}
		hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
		for _, h := range hooks {
			hook := h.(map[string]any)
			if err := dropSkipConditions(hook); err != nil {
				return nil, err
			}
			for _, unsupported := range []string{"namespaceSelector", "matchConditions"} {
				if _, ok := hook[unsupported]; ok {
					// OLM sets the namespaceSelector from the OperatorGroup and
					// has no field for matchConditions.
					return nil, fmt.Errorf("webhook %v has %s, which a CSV cannot express", hook["name"], unsupported)
				}
			}
			// rules, failurePolicy, matchPolicy, objectSelector, sideEffects,
			// timeoutSeconds, admissionReviewVersions and reinvocationPolicy
			// have the same names in both.
			var def v1alpha1.WebhookDescription
			data, err := json.Marshal(hook)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(data, &def); err != nil {
				return nil, err
			}
			name, _, _ := unstructured.NestedString(hook, "name")
			path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			if path == "" {
				return nil, fmt.Errorf("webhook %s has no service path", name)
			}
			def.GenerateName = name
			def.Type = typ
			def.DeploymentName = deployment
			def.ContainerPort = webhookServicePort
			def.TargetPort = &target
			def.WebhookPath = &path
			defs = append(defs, def)
		}
	}
	for _, crd := range c.crds {
		conv := crd.Spec.Conversion
		if conv == nil || conv.Strategy != apiextv1.WebhookConverter {
			continue
		}
		path := "/convert"
		if conv.Webhook != nil && conv.Webhook.ClientConfig != nil && conv.Webhook.ClientConfig.Service != nil &&
			conv.Webhook.ClientConfig.Service.Path != nil {
			path = *conv.Webhook.ClientConfig.Service.Path
		}
		none := admissionregistrationv1.SideEffectClassNone
		defs = append(defs, v1alpha1.WebhookDescription{
			GenerateName:            "c" + crd.Name,
			Type:                    v1alpha1.ConversionWebhook,
			DeploymentName:          deployment,
			ContainerPort:           webhookServicePort,
			TargetPort:              &target,
			SideEffects:             &none,
			AdmissionReviewVersions: conv.Webhook.ConversionReviewVersions,
			WebhookPath:             &path,
			ConversionCRDs:          []string{crd.Name},
		})
	}
	return defs, nil
}

func bundleAnnotations(in *inputs) map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         in.Package,
		"operators.operatorframework.io.bundle.channels.v1":        in.Channels,
		"operators.operatorframework.io.bundle.channel.default.v1": in.DefaultChannel,
	}
}

func dockerfile(annotations map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# Generated by hack/bundle (make bundle): the operator's OLM bundle image.\n" +
		"# Build it with `make bundle-build BUNDLE_IMG=...`.\nFROM scratch\n\n")
	for _, key := range slices.Sorted(maps.Keys(annotations)) {
		fmt.Fprintf(&b, "LABEL %s=%s\n", key, annotations[key])
	}
	b.WriteString("\nCOPY bundle/manifests /manifests/\nCOPY bundle/metadata /metadata/\n")
	return b.Bytes()
}

// almExamples is config/samples as the CSV's alm-examples: one example per
// served version the console offers as a starting point.
func almExamples(samples []*unstructured.Unstructured) (string, error) {
	examples := make([]map[string]any, 0, len(samples))
	for _, s := range samples {
		s = s.DeepCopy()
		labels := s.GetLabels()
		delete(labels, managedByLabel)
		s.SetLabels(labels)
		examples = append(examples, s.Object)
	}
	data, err := json.MarshalIndent(examples, "", "  ")
	return string(data), err
}

func decodeAll(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// marshalObject writes a bundle object: OLM installs it into the namespace of
// the operator's OperatorGroup, and manages it.
func marshalObject(u *unstructured.Unstructured) ([]byte, error) {
	u = u.DeepCopy()
	u.SetNamespace("")
	labels := u.GetLabels()
	delete(labels, managedByLabel)
	u.SetLabels(labels)
	return yaml.Marshal(u.Object)
}

func marshalCSV(csv *v1alpha1.ClusterServiceVersion) ([]byte, error) {
	csv.APIVersion = v1alpha1.SchemeGroupVersion.String()
	csv.Kind = v1alpha1.ClusterServiceVersionKind
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(csv)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	unstructured.RemoveNestedField(m, "spec", "cleanup") // OLM's default: no cleanup of CRs on uninstall
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	deployments, _, _ := unstructured.NestedSlice(m, "spec", "install", "spec", "deployments")
	for _, d := range deployments {
		unstructured.RemoveNestedField(d.(map[string]any), "spec", "template", "metadata", "creationTimestamp")
	}
	if err := unstructured.SetNestedSlice(m, deployments, "spec", "install", "spec", "deployments"); err != nil {
		return nil, err
	}
	return yaml.Marshal(m)
}

func setAnnotation(meta interface {
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
}, key, value string) {
	a := meta.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	meta.SetAnnotations(a)
}

// skipConditions name the matchConditions that only spare the API server a
// call whose answer is known: the Application mutating webhook's when it
// has nothing to default, its validating webhook's on an update that leaves
// the spec and the labels as they are (which it always allows), the
// OperatorConfiguration's on a write that leaves childAccess as it is (or,
// on create, at its default), which it always allows. Without them the webhook is
// called every time, with the same result, so a CSV, which has no field for
// matchConditions, may leave them out. Any other matchCondition changes
// what is admitted and is refused.
var skipConditions = []string{"defaults-to-set", "spec-or-labels-changed",
	"childaccess-changed", "childaccess-not-default"}

// dropSkipConditions removes the matchConditions of hook when every one is
// a skipCondition; it leaves any other for the caller to refuse.
func dropSkipConditions(hook map[string]any) error {
	conds, found, err := unstructured.NestedSlice(hook, "matchConditions")
	if err != nil || !found {
		return err
	}
	for _, c := range conds {
		if name, _, _ := unstructured.NestedString(c.(map[string]any), "name"); !slices.Contains(skipConditions, name) {
			return nil
		}
	}
	delete(hook, "matchConditions")
	return nil
}
