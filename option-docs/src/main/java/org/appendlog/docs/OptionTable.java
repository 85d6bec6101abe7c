/*
 * Copyright AppendLog contributors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package org.appendlog.docs;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.Formatter;
import org.apache.flink.configuration.description.TextElement;
import org.apache.flink.util.TimeUtils;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * The Markdown table of the {@link ConfigOption}s that one class defines as public static
 * fields, in the order the class declares them: key, default, type and description, all from the
 * definitions, so that a table cannot say what the code does not.
 */
final class OptionTable {

    private final Class<?> options;

    OptionTable(Class<?> options) {
        this.options = options;
    }

    /** The options, in declaration order. */
    List<ConfigOption<?>> options() {
        List<ConfigOption<?>> found = new ArrayList<>();
        for (Field field : fields()) {
            found.add(option(field));
        }
        return found;
    }

    String render() {
        StringBuilder table =
                new StringBuilder("| key | default | type | description |\n|---|---|---|---|\n");
        for (Field field : fields()) {
            ConfigOption<?> option = option(field);
            table.append("| `")
                    .append(option.key())
                    .append("` | ")
                    .append(option.hasDefaultValue() ? "`" + value(option.defaultValue()) + "`" : "(none)")
                    .append(" | ")
                    .append(type(field))
                    .append(" | ")
                    .append(cell(new MarkdownFormatter().format(option.description())))
                    .append(formerKeys(option))
                    .append(" |\n");
        }
        return table.toString();
    }

    private List<Field> fields() {
        List<Field> fields = new ArrayList<>();
        for (Field field : options.getDeclaredFields()) {
            int modifiers = field.getModifiers();
            if (Modifier.isPublic(modifiers)
                    && Modifier.isStatic(modifiers)
                    && field.getType() == ConfigOption.class) {
                fields.add(field);
            }
        }
        if (fields.isEmpty()) {
            throw new IllegalArgumentException(options.getName() + " defines no public ConfigOption");
        }
        return fields;
    }

    private static ConfigOption<?> option(Field field) {
        try {
            return (ConfigOption<?>) field.get(null);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot read " + field, e);
        }
    }

    /** The option's value type, from the field's declaration: {@code ConfigOption<Duration>}. */
    private static String type(Field field) {
        Type generic = field.getGenericType();
        if (generic instanceof ParameterizedType) {
            Type value = ((ParameterizedType) generic).getActualTypeArguments()[0];
            if (value instanceof Class<?>) {
                Class<?> type = (Class<?>) value;
                return type.isEnum() ? "enum: " + enumValues(type) : type.getSimpleName();
            }
        }
        return generic.getTypeName();
    }

    private static String enumValues(Class<?> type) {
        StringBuilder values = new StringBuilder();
        for (Object constant : type.getEnumConstants()) {
            values.append(values.length() == 0 ? "" : ", ").append('`').append(constant).append('`');
        }
        return values.toString();
    }

    /**
     * A value as it is written in {@code flink-conf.yaml}; Flink parses an enum value by its
     * {@code toString()}, ignoring case.
     */
    private static String value(Object value) {
        if (value instanceof Duration) {
            return TimeUtils.formatWithHighestUnit((Duration) value);
        }
        return String.valueOf(value);
    }

    private static String formerKeys(ConfigOption<?> option) {
        if (!option.hasDeprecatedKeys()) {
            return "";
        }
        StringBuilder keys = new StringBuilder(" Deprecated key:");
        for (String key : option.deprecatedKeys()) {
            keys.append(" `").append(key).append('`');
        }
        return keys.append('.').toString();
    }

    /** Text that keeps a table row a table row. */
    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    /** Flink's option descriptions as Markdown. */
    private static final class MarkdownFormatter extends Formatter {

        @Override
        protected void formatLink(StringBuilder state, String link, String description) {
            state.append('[').append(description).append("](").append(link).append(')');
        }

        @Override
        protected void formatLineBreak(StringBuilder state) {
            state.append("<br>");
        }

        @Override
        protected void formatText(
                StringBuilder state,
                String format,
                String[] elements,
                EnumSet<TextElement.TextStyle> styles) {
            String text = String.format(format, (Object[]) elements);
            state.append(styles.contains(TextElement.TextStyle.CODE) ? "`" + text + "`" : text);
        }

        @Override
        protected void formatList(StringBuilder state, String[] entries) {
            for (String entry : entries) {
                state.append("<br>- ").append(entry);
            }
        }

        @Override
        protected Formatter newInstance() {
            return new MarkdownFormatter();
        }
    }
}
