# The operator's image, with Docker or podman: `make docker-build IMG=...`
# (`make docker-buildx` for PLATFORMS). It is the image `make image` builds
# without a container engine, file for file. It has no base image, so there
# is no base image to pin by digest, scan or patch.
#
# No RUN and no compiler here: `make docker-build` builds the static manager
# as `make image` does and hack/image writes bin/docker/rootfs-linux-<arch>.tar
# from the same layers as `make image`'s archive: /etc/passwd and /etc/group
# (nonroot 65532), /home/nonroot, /tmp, a CA bundle only with IMAGE_CA_CERTS,
# and the binary as /manager, every timestamp the commit's time. The binary
# is reproducible, so the same commit gives the same files on every build.
# .dockerignore sends only those tars as the build context.
FROM scratch
# Set by BuildKit and podman from the target platform (--platform).
ARG TARGETARCH
# ADD unpacks a local tar, keeping its modes and owners (/home/nonroot is
# 65532's, /tmp is 1777).
ADD bin/docker/rootfs-linux-${TARGETARCH}.tar /
# The labels `make image` also sets; `make docker-build` passes its
# IMAGE_VERSION and REVISION.
ARG VERSION=""
ARG REVISION=""
LABEL org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
# distroless's "nonroot" user, the one the chart's securityContext names.
USER 65532:65532
ENTRYPOINT ["/manager"]
