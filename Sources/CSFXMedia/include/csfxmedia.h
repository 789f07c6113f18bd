#ifndef CSFXMEDIA_H
#define CSFXMEDIA_H

/// How many libmpg123 decoders sfx has made quiet (see mpg123_quiet.c): each MP3 that libsndfile
/// opens makes one. Tests read it to tell that the wrapper is in force.
long sfx_mpg123_quieted_count(void);

/// The shared library that holds sfx's code (its real path, malloc'd: free it), or NULL when
/// sfx is linked into the program itself (see image_path.c).
char *sfx_media_library_path(void);

/// Loads libsndfile (with its codecs' libraries, about 0.7 ms) on a thread of its own, once, so
/// that a command about to decode finds it loaded; a decode that comes first waits for it. See
/// on_demand.c.
void sfx_media_preload(void);

#endif
