/* linux/kfd_ioctl.h includes <drm/drm.h>; Debian ships DRM's uapi header in libdrm-dev only. */
#include <libdrm/drm.h>
