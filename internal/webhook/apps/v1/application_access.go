/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/access"
)

// applicationsResource is the resource of Application, for its refusals.
var applicationsResource = schema.GroupResource{Group: sunappsv1.GroupVersion.Group, Resource: "applications"}

// applicationAccess returns what the operator does for app, which its
// author must be allowed to do, in app's namespace: create and update its
// Deployment and, when spec.service has ports, its Service, and when
// spec.disruptionBudget is set, its PodDisruptionBudget, and when
// spec.autoscaling is set, its HorizontalPodAutoscaler, and when spec.route
// is set, its HTTPRoute. For an update from old (nil on create), delete a
// child the update removes: the Service when the ports go, the budget, the
// autoscaler or the route when its field goes.
func applicationAccess(old, app *sunappsv1.Application) []access.Check {
	checks := access.Writes("apps", "deployments", app.Namespace)
	if len(app.Spec.Service.Ports) > 0 {
		checks = append(checks, access.Writes("", "services", app.Namespace)...)
	} else if old != nil && len(old.Spec.Service.Ports) > 0 {
		checks = append(checks, access.Deletes("", "services", app.Namespace))
	}
	if app.Spec.DisruptionBudget != nil {
		checks = append(checks, access.Writes("policy", "poddisruptionbudgets", app.Namespace)...)
	} else if old != nil && old.Spec.DisruptionBudget != nil {
		checks = append(checks, access.Deletes("policy", "poddisruptionbudgets", app.Namespace))
	}
	if app.Spec.Autoscaling != nil {
		checks = append(checks, access.Writes("autoscaling", "horizontalpodautoscalers", app.Namespace)...)
	} else if old != nil && old.Spec.Autoscaling != nil {
		checks = append(checks, access.Deletes("autoscaling", "horizontalpodautoscalers", app.Namespace))
	}
	if app.Spec.Route != nil {
		checks = append(checks, access.Writes("gateway.networking.k8s.io", "httproutes", app.Namespace)...)
	} else if old != nil && old.Spec.Route != nil {
		checks = append(checks, access.Deletes("gateway.networking.k8s.io", "httproutes", app.Namespace))
	}
	return checks
}
