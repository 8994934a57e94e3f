//go:build tools

// Pins the helm CLI for `go mod tidy`; e2e/scripts/build-helm.sh builds it.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
