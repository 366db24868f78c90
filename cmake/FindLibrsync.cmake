# FindLibrsync: librsync ships neither a CMake package nor a .pc file.
# Provides Librsync::Librsync, Librsync_FOUND, Librsync_VERSION.
find_path(Librsync_INCLUDE_DIR NAMES librsync.h)
find_library(Librsync_LIBRARY NAMES rsync)
if(Librsync_INCLUDE_DIR AND EXISTS "${Librsync_INCLUDE_DIR}/librsync.h")
  file(STRINGS "${Librsync_INCLUDE_DIR}/librsync.h" _ver REGEX "^#define LIBRSYNC_VERSION")
  if(NOT _ver)
    # Older headers carry the version only in rs_librsync_version; leave it unset.
    set(Librsync_VERSION "")
  endif()
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Librsync REQUIRED_VARS Librsync_LIBRARY Librsync_INCLUDE_DIR)
if(Librsync_FOUND AND NOT TARGET Librsync::Librsync)
  add_library(Librsync::Librsync UNKNOWN IMPORTED)
  set_target_properties(Librsync::Librsync PROPERTIES
      IMPORTED_LOCATION "${Librsync_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${Librsync_INCLUDE_DIR}")
  if(Librsync_LIBRARY MATCHES "\\.a$")
    set_property(TARGET Librsync::Librsync APPEND PROPERTY
                 INTERFACE_COMPILE_DEFINITIONS LIBRSYNC_STATIC_DEFINE)
  endif()
endif()
mark_as_advanced(Librsync_INCLUDE_DIR Librsync_LIBRARY)
