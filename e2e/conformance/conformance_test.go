// Runs the upstream Gateway API conformance suite (v1.7) against the e2e harness with exactly
// the tests that send no traffic (there is no data plane here). The TypeScript wrapper starts
// the cluster and the controller, runs this with `go test -json`, and counts the results.
package conformance

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/gateway-api/conformance"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
)

// statusOnly are the tests whose assertions are all on Kubernetes status. Tests that also open
// connections (TLSRouteInvalidBackendRefNonexistent and ...UnknownKind dial the Gateway
// address) are left out: there is no data plane here, and Gateway addresses are cluster IPs
// that must never be dialled from this machine.
var statusOnly = sets.New(
	"BackendTLSPolicyObservedGenerationBump", "BackendTLSPolicyPreserveForeignStatus",
	"GatewayClassObservedGenerationBump", "GatewayInfrastructureMetadata",
	"GatewayInvalidFrontendClientCertificateValidation", "GatewayInvalidParametersRef", "GatewayInvalidRouteKind",
	"GatewayInvalidTLSBackendConfiguration", "GatewayInvalidTLSConfiguration", "GatewayListenerUnsupportedProtocol",
	"GatewayModifyListeners", "GatewayObservedGenerationBump", "GatewayOptionalAddressValue", "GatewayPreserveForeignConditions",
	"GatewaySecretInvalidReferenceGrant", "GatewaySecretMissingReferenceGrant", "GatewaySecretReferenceGrantAllInNamespace",
	"GatewaySecretReferenceGrantSpecific", "GatewayStaticAddresses", "GatewayWithAttachedRoutes", "GatewayNameMaximumLength",
	"HTTPRouteDisallowedKind", "HTTPRouteInvalidCrossNamespaceParentRef", "HTTPRouteInvalidParentRefNotMatchingListenerPort",
	"HTTPRouteInvalidParentRefNotMatchingSectionName", "HTTPRouteInvalidParentRefSectionNameNotMatchingPort", "HTTPRouteObservedGenerationBump",
	"HTTPRoutePreserveForeignStatus",
	"ListenerSetAllowedNamespaceNone", "ListenerSetAllowedNamespaceSame", "ListenerSetAllowedNamespaceSelector",
	"ListenerSetAllowedRoutesSupportedKinds", "ListenerSetDefaultNotAllowed", "ListenerSetHostnameConflict", "ListenerSetProtocolConflict",
	"ListenerSetReferenceGrant", "ListenerSetRouteStatusScopedToParentRef",
	"TCPRouteInvalidBackendRefNonexistent", "TCPRouteInvalidCrossNamespaceBackendRef", "TCPRouteInvalidNonTCPListener",
	"TLSRouteInvalidNoMatchingListenerHostname",
	"TLSRouteInvalidNoMatchingListener", "TLSRouteInvalidReferenceGrant", "TLSRouteListenerMixedTerminationNotSupported",
	"TLSRouteListenerPassthroughSupportedKinds", "TLSRouteListenerTerminateNotSupported", "TLSRouteListenerTerminateSupportedKinds",
	"UDPRouteInvalidBackendRefNonexistent", "UDPRouteInvalidCrossNamespaceBackendRef", "UDPRouteNotAllowedByListeners",
)

func TestConformance(t *testing.T) {
	opts := conformance.DefaultOptions(t)
	opts.GatewayClassName = os.Getenv("TURNPIKE_GATEWAY_CLASS")
	opts.CleanupBaseResources = false
	opts.AllowCRDsMismatch = true
	var selected []suite.ConformanceTest
	for _, ct := range tests.ConformanceTests {
		if statusOnly.Has(ct.ShortName) {
			selected = append(selected, ct)
		}
	}
	if only := os.Getenv("TURNPIKE_CONFORMANCE_ONLY"); only != "" {
		keep := sets.New(strings.Split(only, ",")...)
		var filtered []suite.ConformanceTest
		for _, ct := range selected {
			if keep.Has(ct.ShortName) {
				filtered = append(filtered, ct)
			}
		}
		selected = filtered
	}
	cSuite, err := suite.NewConformanceTestSuite(opts)
	if err != nil {
		t.Fatalf("conformance suite: %v", err)
	}
	cSuite.Setup(t, selected)
	if err := cSuite.Run(t, selected); err != nil {
		t.Fatalf("conformance run: %v", err)
	}
}
