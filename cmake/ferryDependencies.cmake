# Every third-party dependency, found once, as an imported target.
# Names are normalised with ferry_dep:: aliases so the rest of the build does
# not care whether a package came with a CMake config or only a .pc file.
find_package(PkgConfig REQUIRED)

find_package(PNG REQUIRED)                       # PNG::PNG
find_package(JPEG REQUIRED)                      # JPEG::JPEG (libjpeg-turbo)
find_package(Protobuf REQUIRED)                  # protobuf::libprotobuf, protobuf::protoc
find_package(Librsync REQUIRED)                  # Librsync::Librsync (cmake/FindLibrsync.cmake)
find_package(CURL REQUIRED)                      # CURL::libcurl
find_package(EXPAT REQUIRED)                     # EXPAT::EXPAT: S3's XML answers
find_package(ZLIB REQUIRED)                      # ZLIB::ZLIB: TFRecord GZIP shards
find_package(SQLite3 REQUIRED)                   # SQLite::SQLite3: publish stat cache, sync cache index
find_package(OpenSSL REQUIRED)                   # OpenSSL::Crypto: MD5 for wids indexes
find_package(Threads REQUIRED)
find_package(TBB REQUIRED CONFIG)                # TBB::tbb: ordered parallel pipelines
find_package(CLI11 REQUIRED CONFIG)              # CLI11::CLI11

find_package(zstd CONFIG QUIET)
if(TARGET zstd::libzstd_shared)
  add_library(ferry_dep::zstd ALIAS zstd::libzstd_shared)
else()
  pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
  add_library(ferry_dep::zstd ALIAS PkgConfig::ZSTD)
endif()

find_package(xxHash CONFIG QUIET)
if(TARGET xxHash::xxhash)
  add_library(ferry_dep::xxhash ALIAS xxHash::xxhash)
else()
  pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
  add_library(ferry_dep::xxhash ALIAS PkgConfig::XXHASH)
endif()

# libdeflate: whole-buffer inflate, several times faster than zlib (PNG decode).
pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)
add_library(ferry_dep::deflate ALIAS PkgConfig::LIBDEFLATE)

# libb2: BLAKE2b for the block matcher's strong sums (librsync's own BLAKE2b
# comes from it too, but librsync does not export it).
pkg_check_modules(LIBB2 REQUIRED IMPORTED_TARGET libb2)
add_library(ferry_dep::b2 ALIAS PkgConfig::LIBB2)

# simdjson: reading JSON and JSONL listings (validates UTF-8; numbers kept as
# their text). Debian's libsimdjson-dev ships a CMake config.
find_package(simdjson REQUIRED CONFIG)
add_library(ferry_dep::simdjson ALIAS simdjson::simdjson)
