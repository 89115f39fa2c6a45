package v1

// Condition types of an Application.
const (
	// ConditionReady is True when the Deployment (and the Service, if any)
	// exist, are controlled by the Application, hold its current spec, and the
	// Deployment is available and not degraded.
	ConditionReady = "Ready"
	// ConditionAvailable mirrors the Deployment's Available condition.
	ConditionAvailable = "Available"
	// ConditionProgressing mirrors the Deployment's Progressing condition.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the Deployment cannot make progress
	// (ProgressDeadlineExceeded) or cannot create Pods (ReplicaFailure).
	ConditionDegraded = "Degraded"
)

// Reasons of an Application's conditions.
const (
	// ReasonReady: everything is in place and available.
	ReasonReady = "Ready"
	// ReasonResourceConflict: a Deployment or Service of the Application's
	// name exists and is not controlled by it; the operator leaves it alone.
	ReasonResourceConflict = "ResourceConflict"
	// ReasonApplyFailed: the API server refused the desired child object.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonSelectorImmutable: spec.deployment.selector differs from the
	// existing Deployment's selector, which cannot change.
	ReasonSelectorImmutable = "SelectorImmutable"
	// ReasonRollingOut: the Deployment has not yet rolled out the current spec.
	ReasonRollingOut = "RollingOut"
	// ReasonDeploymentUnavailable: the Deployment has fewer available Pods
	// than it needs.
	ReasonDeploymentUnavailable = "DeploymentUnavailable"
	// ReasonDeploymentDegraded: the Deployment reports a failure.
	ReasonDeploymentDegraded = "DeploymentDegraded"
	// ReasonDeploymentMissing: the Deployment does not exist (yet).
	ReasonDeploymentMissing = "DeploymentMissing"
	// ReasonAsExpected: used by Degraded=False when nothing is wrong.
	ReasonAsExpected = "AsExpected"
	// ReasonStatusUnknown: the Deployment has not reported this condition yet.
	ReasonStatusUnknown = "StatusUnknown"
	// ReasonProgressDeadlineExceeded mirrors the Deployment's reason.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)
