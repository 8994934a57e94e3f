// The generated Envoy message types we build, under short names.
export type { Listener } from './generated/envoy/config/listener/v3/Listener.js';
export type { FilterChain } from './generated/envoy/config/listener/v3/FilterChain.js';
export type { Filter } from './generated/envoy/config/listener/v3/Filter.js';
export type { RouteConfiguration } from './generated/envoy/config/route/v3/RouteConfiguration.js';
export type { VirtualHost } from './generated/envoy/config/route/v3/VirtualHost.js';
export type { Route } from './generated/envoy/config/route/v3/Route.js';
export type { RouteMatch } from './generated/envoy/config/route/v3/RouteMatch.js';
export type { RouteAction } from './generated/envoy/config/route/v3/RouteAction.js';
export type { RedirectAction } from './generated/envoy/config/route/v3/RedirectAction.js';
export type { HeaderMatcher } from './generated/envoy/config/route/v3/HeaderMatcher.js';
export type { Cluster } from './generated/envoy/config/cluster/v3/Cluster.js';
export type { ClusterLoadAssignment } from './generated/envoy/config/endpoint/v3/ClusterLoadAssignment.js';
export type { LocalityLbEndpoints } from './generated/envoy/config/endpoint/v3/LocalityLbEndpoints.js';
export type { Secret } from './generated/envoy/extensions/transport_sockets/tls/v3/Secret.js';
// prettier-ignore
export type {
  DownstreamTlsContext,
} from './generated/envoy/extensions/transport_sockets/tls/v3/DownstreamTlsContext.js';
export type { UpstreamTlsContext } from './generated/envoy/extensions/transport_sockets/tls/v3/UpstreamTlsContext.js';
// The generated path is longer than a line: the file is named after its proto package.
// prettier-ignore
export type {
  HttpConnectionManager,
} from './generated/envoy/extensions/filters/network/http_connection_manager/v3/HttpConnectionManager.js';
export type { Router } from './generated/envoy/extensions/filters/http/router/v3/Router.js';
export type { TcpProxy } from './generated/envoy/extensions/filters/network/tcp_proxy/v3/TcpProxy.js';
export type { UdpProxyConfig } from './generated/envoy/extensions/filters/udp/udp_proxy/v3/UdpProxyConfig.js';
export type { CorsPolicy } from './generated/envoy/extensions/filters/http/cors/v3/CorsPolicy.js';
export type { HeaderValueOption } from './generated/envoy/config/core/v3/HeaderValueOption.js';
export type { Duration } from './generated/google/protobuf/Duration.js';
export type { Any } from './generated/google/protobuf/Any.js';
export type { Bootstrap } from './generated/envoy/config/bootstrap/v3/Bootstrap.js';
export type { OverloadManager } from './generated/envoy/config/overload/v3/OverloadManager.js';
// prettier-ignore
export type {
  FixedHeapConfig,
} from './generated/envoy/extensions/resource_monitors/fixed_heap/v3/FixedHeapConfig.js';
export type { LuaPerRoute } from './generated/envoy/extensions/filters/http/lua/v3/LuaPerRoute.js';
export type { Lua } from './generated/envoy/extensions/filters/http/lua/v3/Lua.js';
export type { Cors } from './generated/envoy/extensions/filters/http/cors/v3/Cors.js';
export type { TlsInspector } from './generated/envoy/extensions/filters/listener/tls_inspector/v3/TlsInspector.js';
export type { FilterConfig } from './generated/envoy/config/route/v3/FilterConfig.js';
export type { Wasm } from './generated/envoy/extensions/filters/http/wasm/v3/Wasm.js';
export type { AsyncDataSource } from './generated/envoy/config/core/v3/AsyncDataSource.js';
export type { HttpFilter } from './generated/envoy/extensions/filters/network/http_connection_manager/v3/HttpFilter.js';
export type { AccessLog } from './generated/envoy/config/accesslog/v3/AccessLog.js';
export type { StdoutAccessLog } from './generated/envoy/extensions/access_loggers/stream/v3/StdoutAccessLog.js';
export type { SubstitutionFormatString } from './generated/envoy/config/core/v3/SubstitutionFormatString.js';
// prettier-ignore
export type {
  OpenTelemetryAccessLogConfig,
} from './generated/envoy/extensions/access_loggers/open_telemetry/v3/OpenTelemetryAccessLogConfig.js';
export type { KeyValue } from './generated/opentelemetry/proto/common/v1/KeyValue.js';
export type { ExtAuthz } from './generated/envoy/extensions/filters/http/ext_authz/v3/ExtAuthz.js';
export type { ExtAuthzPerRoute } from './generated/envoy/extensions/filters/http/ext_authz/v3/ExtAuthzPerRoute.js';
export type { ListStringMatcher } from './generated/envoy/type/matcher/v3/ListStringMatcher.js';
