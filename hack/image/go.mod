// hack/image builds the operator's image, its index and SBOM without Docker
// (make image, make release): a module of its own, so that
// go-containerregistry and CycloneDX stay out of the operator's module,
// sunstrider.cn/operator, whose go.mod and go.sum are then what the manager
// is built from (README, "Layout"). It imports none of the operator's
// packages. No go.work: a workspace would merge the modules' graphs again.
module sunstrider.cn/operator/hack/image

go 1.26.0

toolchain go1.26.11

require (
	github.com/CycloneDX/cyclonedx-go v0.9.3
	github.com/google/go-containerregistry v0.22.1
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/klauspost/compress v1.20.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
