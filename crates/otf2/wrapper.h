/* Everything the reader needs from the OTF2 library, and vsnprintf for its error
 * callback's message (a va_list bindgen types the same way in both declarations). */
#include <stdio.h>
#include <otf2/otf2.h>
