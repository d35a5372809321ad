/*
 * mime.h - the media type nginx sends for a file name.
 */
#ifndef KILN_MIME_H
#define KILN_MIME_H

/*
 * The media type nginx 1.22's stock mime.types assigns to NAME's last
 * extension (nginx lowercases the extension before looking it up), or
 * "application/octet-stream", the default_type of Debian's nginx.conf, for
 * anything else.  Static string.
 */
const char *kiln_media_type(const char *name);

#endif
