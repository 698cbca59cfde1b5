/*
 * value.c -- mapi_value: a read-only view of the json-c objects of a
 * document.  A mapi_value pointer IS a json_object pointer; JSON null is the
 * NULL pointer, as in json-c.  Nothing here allocates or mutates, so values
 * may be read from several threads at once (json_object_to_json_string,
 * which caches into the object, is never called).
 */
#include <json-c/json.h>
#include <string.h>

#include "internal.h"

#define JO(v) ((struct json_object *)(v))

mapi_type mapi_value_type(const mapi_value *v)
{
    switch (json_object_get_type(JO(v))) {
    case json_type_boolean: return MAPI_BOOL;
    case json_type_int: return MAPI_INT;
    case json_type_double: return MAPI_NUMBER;
    case json_type_string: return MAPI_STRING;
    case json_type_array: return MAPI_ARRAY;
    case json_type_object: return MAPI_OBJECT;
    case json_type_null:
    default: return MAPI_NULL;
    }
}

int mapi_value_bool(const mapi_value *v)
{
    return json_object_is_type(JO(v), json_type_boolean) && json_object_get_boolean(JO(v));
}

int mapi_value_int64(const mapi_value *v, int64_t *out)
{
    if (!json_object_is_type(JO(v), json_type_int))
        return -1;
    /* numscan sends every integer of 19+ digits down the text path, so
       json-c only holds integers that fit int64 exactly. */
    *out = json_object_get_int64(JO(v));
    return 0;
}

const char *mapi_value_number_text(const mapi_value *v)
{
    if (!json_object_is_type(JO(v), json_type_double))
        return NULL;
    /* json-c's tokener keeps the source text of a parsed double as the
       object's userdata (json_object_new_double_s); jsonapi.c checks at
       parse time that every number has it. */
    return (const char *)json_object_get_userdata(JO(v));
}

const char *mapi_value_string(const mapi_value *v, size_t *len)
{
    if (!json_object_is_type(JO(v), json_type_string))
        return NULL;
    if (len)
        *len = (size_t)json_object_get_string_len(JO(v));
    return json_object_get_string(JO(v));
}

size_t mapi_value_len(const mapi_value *v)
{
    if (json_object_is_type(JO(v), json_type_array))
        return json_object_array_length(JO(v));
    if (json_object_is_type(JO(v), json_type_object))
        return (size_t)json_object_object_length(JO(v));
    return 0;
}

const mapi_value *mapi_value_at(const mapi_value *v, size_t i)
{
    if (!json_object_is_type(JO(v), json_type_array) || i >= json_object_array_length(JO(v)))
        return NULL;
    return (const mapi_value *)json_object_array_get_idx(JO(v), i);
}

const mapi_value *mapi_value_get(const mapi_value *v, const char *key)
{
    struct json_object *m = NULL;
    if (!key || !json_object_is_type(JO(v), json_type_object))
        return NULL;
    if (!json_object_object_get_ex(JO(v), key, &m))
        return NULL;
    return (const mapi_value *)m;
}

int mapi_value_has(const mapi_value *v, const char *key)
{
    if (!key || !json_object_is_type(JO(v), json_type_object))
        return 0;
    return json_object_object_get_ex(JO(v), key, NULL) ? 1 : 0;
}

void mapi_members_begin(const mapi_value *obj, mapi_members *it)
{
    it->pos = NULL;
    if (json_object_is_type(JO(obj), json_type_object))
        it->pos = lh_table_head(json_object_get_object(JO(obj)));
}

int mapi_members_next(mapi_members *it, const char **key, const mapi_value **value)
{
    const struct lh_entry *e = (const struct lh_entry *)it->pos;
    if (!e)
        return 0;
    if (key)
        *key = (const char *)lh_entry_k(e);
    if (value)
        *value = (const mapi_value *)lh_entry_v(e);
    it->pos = lh_entry_next(e);
    return 1;
}
