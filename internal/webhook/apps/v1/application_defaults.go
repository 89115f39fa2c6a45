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
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	appscontroller "sunstrider.cn/operator/internal/controller/apps"
)

// defaultApplication sets the defaults of app in place. old is the stored
// Application on update, nil on create.
//
//   - spec.deployment.selector: on create, when absent or empty, the selector
//     the controller would derive, {apps.sunstrider.cn/application: <name>};
//     with generateName the name is not known yet and the selector stays
//     unset (the controller derives the same one from the final name);
//     on update, when absent or empty, the stored selector (a selector never
//     changes, and re-applying a manifest that leaves it out must not try to).
//   - spec.deployment.replicas: 1.
//   - spec.deployment.template.metadata.labels: every selector matchLabel
//     that is missing.
//   - spec.service.ports: protocol TCP; targetPort the port.
func defaultApplication(app, old *sunappsv1.Application) {
	d := &app.Spec.Deployment
	if sunappsv1.IsEmptySelector(d.Selector) {
		switch {
		case old == nil && app.Name != "":
			d.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{appscontroller.ApplicationLabel: app.Name}}
		case old != nil && !sunappsv1.IsEmptySelector(old.Spec.Deployment.Selector):
			d.Selector = old.Spec.Deployment.Selector.DeepCopy()
		}
	}
	if d.Replicas == nil {
		d.Replicas = ptr.To[int32](1)
	}
	defaultTemplateLabels(d)
	defaultServicePorts(app.Spec.Service.Ports)
}

// defaultTemplateLabels adds the selector's matchLabels the Pod template
// lacks. A template label contradicting the selector stays, for validation
// to reject.
func defaultTemplateLabels(d *sunappsv1.DeploymentTemplate) {
	if d.Selector == nil || len(d.Selector.MatchLabels) == 0 {
		return
	}
	labels := maps.Clone(d.Template.Labels)
	if labels == nil {
		labels = make(map[string]string, len(d.Selector.MatchLabels))
	}
	for k, v := range d.Selector.MatchLabels {
		if _, ok := labels[k]; !ok {
			labels[k] = v
		}
	}
	d.Template.Labels = labels
}

// defaultServicePorts sets the protocol (TCP) and targetPort (the port) of
// the ports that leave them out.
func defaultServicePorts(ports []corev1.ServicePort) {
	for i := range ports {
		p := &ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
}
