/*
 * version.c -- the library's version at run time (mapi_version), for
 * programs that want to know which libmerchantapi the dynamic linker gave
 * them rather than the header they were compiled with.
 */
#include "merchantapi.h"

const char *mapi_version(void)
{
    return MAPI_VERSION;
}
