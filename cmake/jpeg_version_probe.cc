/* Configure-time probe (PerfbenchJpeg.cmake): does the JPEG_LIB_VERSION that
 * jpeglib.h compiles with match the library this links? libjpeg checks it
 * in jpeg_CreateCompress and reports both numbers on a mismatch. Prints one
 * line; exit 0 when they match, 1 when they do not. */
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <jpeglib.h>

static jmp_buf failed;
static int library_version = 0, header_version = 0;

static char other_error[JMSG_LENGTH_MAX];

static void on_error(j_common_ptr cinfo) {
  /* The message code's number differs between library versions (jerror.h's
   * table grows with JPEG_LIB_VERSION), so the library's own text decides:
   * "Wrong JPEG library version: library is %d, caller expects %d". */
  (*cinfo->err->format_message)(cinfo, other_error);
  if (std::strstr(other_error, "library version") != nullptr) {
    library_version = cinfo->err->msg_parm.i[0];
    header_version = cinfo->err->msg_parm.i[1];
    other_error[0] = '\0';
  }
  longjmp(failed, 1);
}

int main() {
  struct jpeg_compress_struct cinfo;
  struct jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  err.error_exit = on_error;
  if (setjmp(failed)) {
    if (other_error[0] != '\0')
      printf("the library refused the headers' compressor: %s\n", other_error);
    else
      printf("library is %d, headers (jconfig.h) say %d\n", library_version, header_version);
    return 1;
  }
  jpeg_create_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  printf("JPEG_LIB_VERSION %d, headers and library agree\n", JPEG_LIB_VERSION);
  return 0;
}
