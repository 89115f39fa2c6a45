package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"

	webappcontroller "sunstrider.cn/operator/internal/controller/webapp"
)

const bundleDir = "../../bundle"

// allowedWarnings are the validators' warnings reviewed and accepted, each
// matched by a substring of its message (the key; the value and comment say
// why it is accepted). An entry that no longer matches fails the test too,
// so the list stays what the bundle actually warns about.
var allowedWarnings = map[string]string{}

// removedAPIsWarning starts the warning that lists, per resource, the RBAC
// rules naming a resource of which some API version was removed. The
// validator lists the resources in map order, so the message changes from
// run to run: each resource is checked against allowedRemovedAPIs instead.
const removedAPIsWarning = "this bundle is using APIs which were deprecated and removed in v1.25."

// allowedRemovedAPIs are the resources that warning may name. RBAC rules
// name no version, so the validator flags any permission on a resource one of
// whose versions went in 1.25; the operator uses the versions 1.25 kept.
var allowedRemovedAPIs = map[string]string{
	"events":                   "events.k8s.io/v1 is meant, not v1beta1",
	"poddisruptionbudgets":     "policy/v1 is meant, not v1beta1",
	"horizontalpodautoscalers": "autoscaling/v2 is meant, not v2beta1",
}

// removedAPIResource matches one resource of that warning's list.
var removedAPIResource = regexp.MustCompile(`([a-z0-9.]+): \(\[`)

// TestBundleValidates runs operator-framework/api's validators on bundle/ as
// `operator-sdk bundle validate --select-optional suite=operatorframework`
// does: the default bundle validators, OperatorHub's (v2, capabilities,
// categories), the good practices and the objects' (the PodDisruptionBudget,
// RBAC) validators, against the Kubernetes version the tests run.
func TestBundleValidates(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		t.Fatalf("loading %s: %v", bundleDir, err)
	}
	objs := append(bundle.ObjectsToValidate(), map[string]string{"k8s-version": testedKubernetesVersion(t)})
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
		validation.ObjectValidator,
	)
	used := map[string]bool{}
	for _, result := range validators.Validate(objs...) {
		for _, e := range result.Errors {
			t.Errorf("%s: error: %s", result.Name, e)
		}
		for _, w := range result.Warnings {
			if strings.Contains(w.Error(), removedAPIsWarning) {
				for _, m := range removedAPIResource.FindAllStringSubmatch(w.Error(), -1) {
					resource := m[1]
					why, ok := allowedRemovedAPIs[resource]
					if !ok {
						t.Errorf("%s: %s uses a removed API not in allowedRemovedAPIs: %s", result.Name, resource, w)
						continue
					}
					used[resource] = true
					t.Logf("%s: allowed removed API %s (%s)", result.Name, resource, why)
				}
				continue
			}
			if key := allowedWarning(w); key != "" {
				used[key] = true
				t.Logf("%s: allowed warning (%s): %s", result.Name, allowedWarnings[key], w)
				continue
			}
			t.Errorf("%s: warning not in allowedWarnings: %s", result.Name, w)
		}
	}
	for key := range allowedWarnings {
		if !used[key] {
			t.Errorf("allowedWarnings has %q, which no validator reports any more: remove it", key)
		}
	}
	for resource := range allowedRemovedAPIs {
		if !used[resource] {
			t.Errorf("allowedRemovedAPIs has %q, which no validator reports any more: remove it", resource)
		}
	}
}

func allowedWarning(w errors.Error) string {
	for key := range allowedWarnings {
		if strings.Contains(w.Error(), key) {
			return key
		}
	}
	return ""
}

// testedKubernetesVersion is the Kubernetes the envtest and e2e suites run
// (hack/k8s/go.mod), which the deprecated-API check looks at.
func testedKubernetesVersion(t *testing.T) string {
	data, err := os.ReadFile("../k8s/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "k8s.io/kubernetes" {
			return strings.TrimPrefix(fields[1], "v")
		}
	}
	t.Fatal("hack/k8s/go.mod requires no k8s.io/kubernetes")
	return ""
}

// TestBundleRunsUnderOLM checks what the validators cannot know: the choices
// docs/olm.md explains.
func TestBundleRunsUnderOLM(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		t.Fatalf("loading %s: %v", bundleDir, err)
	}
	csv := bundle.CSV
	strategy := csv.Spec.InstallStrategy.StrategySpec

	t.Run("the manager uses the certificate OLM mounts", func(t *testing.T) {
		if len(strategy.DeploymentSpecs) != 1 {
			t.Fatalf("%d deployments, want 1", len(strategy.DeploymentSpecs))
		}
		pod := strategy.DeploymentSpecs[0].Spec.Template.Spec
		if !slices.Contains(pod.Containers[0].Args, "--cert-mode=external") {
			t.Errorf("manager args %v lack --cert-mode=external", pod.Containers[0].Args)
		}
		for _, m := range pod.Containers[0].VolumeMounts {
			if m.MountPath == webhookCertDir {
				t.Errorf("volume %s is mounted at %s, where OLM mounts the serving certificate", m.Name, m.MountPath)
			}
		}
	})

	t.Run("the operator cannot create or change CRDs or read Secrets", func(t *testing.T) {
		for _, perms := range [][]v1alpha1.StrategyDeploymentPermissions{strategy.Permissions, strategy.ClusterPermissions} {
			for _, p := range perms {
				for _, r := range p.Rules {
					for _, res := range r.Resources {
						switch res {
						case "customresourcedefinitions", "secrets", "*",
							"mutatingwebhookconfigurations", "validatingwebhookconfigurations":
							t.Errorf("%s may %v %s", p.ServiceAccountName, r.Verbs, res)
						}
					}
				}
			}
		}
	})

	t.Run("every conversion webhook is a webhook definition", func(t *testing.T) {
		for _, crd := range bundle.V1CRDs {
			if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != "Webhook" {
				continue
			}
			if !slices.ContainsFunc(csv.Spec.WebhookDefinitions, func(w v1alpha1.WebhookDescription) bool {
				return w.Type == v1alpha1.ConversionWebhook && slices.Contains(w.ConversionCRDs, crd.Name)
			}) {
				t.Errorf("CRD %s converts by webhook but the CSV defines no conversion webhook for it", crd.Name)
			}
		}
	})

	t.Run("the operand images are related images", func(t *testing.T) {
		if !slices.ContainsFunc(csv.Spec.RelatedImages, func(r v1alpha1.RelatedImage) bool {
			return r.Image == webappcontroller.DefaultGuestbookImage
		}) {
			t.Errorf("relatedImages %v lack the default Guestbook image %s (hack/bundle/csv.base.yaml)",
				csv.Spec.RelatedImages, webappcontroller.DefaultGuestbookImage)
		}
	})

	t.Run("no dependencies", func(t *testing.T) {
		if len(bundle.Dependencies) > 0 || len(csv.Spec.CustomResourceDefinitions.Required) > 0 {
			t.Errorf("the bundle requires %v %v; it has no dependencies (docs/olm.md)", bundle.Dependencies,
				csv.Spec.CustomResourceDefinitions.Required)
		}
	})
}
