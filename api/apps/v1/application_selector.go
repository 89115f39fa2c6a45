package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// IsEmptySelector tells whether s selects by nothing. The webhook and the
// controller both treat such a spec.deployment.selector as absent (the
// operator then derives one from the Application's name).
func IsEmptySelector(s *metav1.LabelSelector) bool {
	return s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0)
}
