package apps

import (
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// ApplicationLabel names the Application a child belongs to. Its value is
// the Application's name; it is also the derived Pod selector.
const ApplicationLabel = "apps.sunstrider.cn/application"

// errSelectorImmutable reports a spec.deployment.selector that differs from
// the selector of the existing Deployment, which the API server cannot change.
var errSelectorImmutable = errors.New("spec.deployment.selector differs from the existing Deployment's selector, which is immutable")

// applicationSelector returns the Pod selector of app's Deployment. An
// existing Deployment's selector always wins, so the selector never changes
// for an existing Application (whatever a past or future operator version
// derived); otherwise the user's selector; otherwise one derived from the
// Application's name.
func applicationSelector(app *sunappsv1.Application, existing *appsv1.Deployment) (*metav1.LabelSelector, error) {
	requested := app.Spec.Deployment.Selector
	if sunappsv1.IsEmptySelector(requested) {
		requested = nil
	}
	if existing != nil && existing.Spec.Selector != nil {
		if requested != nil && !equality.Semantic.DeepEqual(requested, existing.Spec.Selector) {
			return existing.Spec.Selector.DeepCopy(), errSelectorImmutable
		}
		return existing.Spec.Selector.DeepCopy(), nil
	}
	if requested != nil {
		return requested.DeepCopy(), nil
	}
	return &metav1.LabelSelector{MatchLabels: map[string]string{ApplicationLabel: app.Name}}, nil
}
