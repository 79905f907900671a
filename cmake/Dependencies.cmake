# All third-party libraries come from Debian 12 packages (scripts/install-deps.sh).
# Libraries without a CMake package config are imported through pkg-config.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(spdlog REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(simdjson REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 REQUIRED)
# Debian's libcurl4-openssl-dev 7.88: the schema registry client (connectors/schema_registry).
find_package(CURL 7.85 REQUIRED)
# Debian's prometheus-cpp-dev 1.0.1. We link only prometheus-cpp::core (registry, metric types,
# text serializer): /metrics is served by our own HTTP server, not by prometheus-cpp's pull.
find_package(prometheus-cpp CONFIG REQUIRED)

pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)
pkg_check_modules(THRIFT REQUIRED IMPORTED_TARGET thrift)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
# Debian's libavro-dev (avro-c 1.11.1): the Avro input format (event_formats/src/avro_*.cpp).
pkg_check_modules(AVRO REQUIRED IMPORTED_TARGET avro-c)
# Debian's libkrb5-dev (MIT Kerberos 1.20): keytab logins into private credential caches
# (connectors/kerberos).
pkg_check_modules(KRB5 REQUIRED IMPORTED_TARGET krb5)

find_program(THRIFT_COMPILER thrift REQUIRED)

# Debian's libprotobuf-dev 3.21: the Protobuf input format (event_formats/src/protobuf_*.cpp). Its
# libprotoc (compiler::Parser, for .proto text) has no pkg-config file and is linked by name.
pkg_check_modules(PROTOBUF REQUIRED IMPORTED_TARGET protobuf)

if(HBINGEST_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(HBINGEST_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
