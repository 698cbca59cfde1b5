/* version.c -- the library's version at run time (mapi_version). */
#include "base.h"

const char *mapi_version(void)
{
    return MAPI_VERSION;
}
