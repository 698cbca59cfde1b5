/* version.c -- the library's version at run time (mapi_version). */
#include "merchantapi.h"

const char *mapi_version(void)
{
    return MAPI_VERSION;
}
