package dev.gpuctl.text;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;

/**
 * gpuctl's one Jackson {@link ObjectMapper}, in Jackson's default configuration; configured once here and never after,
 * so every thread may share it. A use that needs other settings takes a {@link ObjectMapper#reader() reader} or
 * {@link ObjectMapper#writer() writer} with them (as {@link #PRETTY} and {@link JsonText}'s strict reader do), never
 * a mapper of its own.
 */
public final class Json {
    private Json() {}

    /** The one mapper. */
    public static final ObjectMapper MAPPER = new ObjectMapper();

    /** Jackson's default pretty printer: what {@code --json} prints and what gpuctl keeps on disk. */
    public static final ObjectWriter PRETTY = MAPPER.writerWithDefaultPrettyPrinter();
}
